// Placeholder so the package resolves while this layer is being written.
