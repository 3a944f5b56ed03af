// Placeholder so the package resolves while these tests are being written.
