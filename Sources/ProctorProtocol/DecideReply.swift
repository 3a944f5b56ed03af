public import JSONCore
public import Varlink

/// `Decide`'s reply written straight to bytes (`VarlinkDirectReply`), for the direct path
/// (`DecideFastPath.swift` reads the request).
extension Agent.Decide.Reply: VarlinkDirectReply {
    /// `{"allowed":…,"reason":…,"rule":…}`: the members of `fields`, in their canonical order.
    public func writeParameters(to out: inout [UInt8]) {
        out.append(contentsOf: (allowed ? #"{"allowed":true,"reason":"# : #"{"allowed":false,"reason":"#).utf8)
        JSONValue.writeString(reason, to: &out)
        out.append(contentsOf: #","rule":"#.utf8)
        JSONValue.writeString(rule, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}
