/// Why a test helper could not do what it was asked, with the detail a failing test needs.
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
