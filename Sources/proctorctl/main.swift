// Placeholder main while this executable is being written.
