import Glibc

/// The C library's text for an errno value.
func errorText(_ number: Int32) -> String {
    String(cString: strerror(number)) + " (errno \(number))"
}
