import CLinux

/// The C heap (glibc's malloc), for a process that frees a large structure at known moments.
public enum Heap {
    /// Gives the free pages of every malloc arena back to the kernel (`malloc_trim(0)`). Freed
    /// memory otherwise stays resident: after proctord parses and replaces a 100 000-app
    /// policy, ≈ 10 MiB of it sits in free chunks glibc keeps for later. Takes about a
    /// millisecond for a 100 MiB heap; it holds each arena's lock while it trims that arena.
    public static func returnFreePagesToKernel() {
        _ = malloc_trim(0)
    }
}
