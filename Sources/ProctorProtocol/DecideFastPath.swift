import JSONCore
public import ProctorPolicy

/// `Decide` straight from its call's bytes (`VarlinkDirectMethod`; the reply side is
/// DecideReply.swift): proctord's hot call, where reading its parameters into
/// `[String: JSONValue]` and the request from that cost more than the decision itself.
extension Agent.Decide {
    /// A plain `Decide` call's parameters as they lie in its frame (`VarlinkDirectMethod`):
    /// the session id is left as bytes, for the connection to compare with the session it
    /// found last before making a `String` of it; the target too, which the engine reads as
    /// bytes (`CompiledPolicy.engineDecision(app:remembering:…)`).
    public struct PlainRequest {
        /// The session id's bytes (printable ASCII), in the call's frame: valid only while
        /// the call is answered.
        public let session: UnsafeRawBufferPointer
        /// Whether `session` is the id `read` was told the caller most likely names
        /// (`read(_:knownSessionID:)`): compared with it there, and so known to be that id.
        public let sessionIsKnown: Bool
        public let action: Action
        /// The target's bytes (valid UTF-8), in the call's frame: valid only while the call is
        /// answered.
        public let target: UnsafeBufferPointer<UInt8>?
        public let size: Int?

        /// Reads the parameters of a `Decide` call written the plainest way
        /// (`JSONPlainObject`), or returns nil for anything the general path must answer: a
        /// member that is not one of the four or comes twice, a value of another type (a
        /// null too), an action that is not one, a size beyond 15 digits or not written as
        /// an integer, an escape, white space, a session id that is not ASCII, invalid UTF-8.
        /// What it accepts, `Agent.Decide.Request(_:)` reads to the same values from the
        /// parsed object.
        ///
        /// The form the SDK writes (`readCanonical`) is read first; anything else, by the
        /// reader of the members in any order (`readAnyOrder`), whose results are the same
        /// for what both take (`DecideFastPathTests`). `knownSessionID`, the id the caller
        /// most likely names (its connection's last session's), is compared in place with the
        /// call's in the SDK's form before the call's is checked (`sessionIsKnown`).
        public static func read(_ parameters: UnsafeRawBufferPointer, knownSessionID: UnsafeRawBufferPointer? = nil) -> Self? {
            readCanonical(parameters, knownSessionID: knownSessionID) ?? readAnyOrder(parameters)
        }

        /// The length of the session ids proctord makes (32 hex digits), which `readCanonical`
        /// reads without searching for their end. Another length is read by `readAnyOrder`.
        public static var canonicalSessionIDCount: Int { 32 }

        /// Reads the parameters written as the SDK and `JSONValue.write` write them: the members
        /// sorted (`action`, `session`, then `size` and `target` if present), no white space,
        /// a session id of `canonicalSessionIDCount` bytes. The stretches that never change
        /// are compared as words, the action told by its first byte and compared whole with its
        /// closing quote; only the session id, the size and the target are read — the session
        /// id compared in place with `knownSessionID` when given, and checked only when it
        /// differs. Returns nil for anything else, which `readAnyOrder` then reads (or
        /// refuses): it takes only what `readAnyOrder` takes, to the same values.
        @inline(__always)
        static func readCanonical(_ parameters: UnsafeRawBufferPointer, knownSessionID: UnsafeRawBufferPointer? = nil) -> Self? {
            guard var object = JSONPlainObject(parameters), object.literal(#""action":""#),
                  let action = canonicalAction(&object), object.literal(#","session":"#) else { return nil }
            let session: UnsafeRawBufferPointer
            var sessionIsKnown = false
            if let knownSessionID, knownSessionID.count == canonicalSessionIDCount, let id = object.string(sameAs: knownSessionID) {
                (session, sessionIsKnown) = (id, true)
            } else {
                guard let id = object.asciiString(count: canonicalSessionIDCount) else { return nil }
                session = id
            }
            var size: Int?
            if object.key("size") {
                guard let integer = object.integer() else { return nil }
                size = integer
            }
            var target: UnsafeRawBufferPointer?
            if object.key("target") {
                guard let text = object.utf8String() else { return nil }
                target = text
            }
            guard !object.hasMember else { return nil }
            return Self(session: session, sessionIsKnown: sessionIsKnown, action: action,
                        target: target?.assumingMemoryBound(to: UInt8.self), size: size)
        }

        /// The action whose name and closing quote come next, consumed; nil (nothing consumed)
        /// for any other bytes. Told apart by the first byte, then compared whole, the quote
        /// with it: no search for the string's end. Inlined, each name's words are constants
        /// (called, a name's comparison was a loop over its length).
        @inline(__always)
        private static func canonicalAction(_ object: inout JSONPlainObject) -> Action? {
            switch object.nextByte {
            case UInt8(ascii: "c"):
                if object.literal(#"clipboard.copy""#) { return .clipboardCopy }
                if object.literal(#"clipboard.paste""#) { return .clipboardPaste }
            case UInt8(ascii: "f"): if object.literal(#"file.export""#) { return .fileExport }
            case UInt8(ascii: "l"): if object.literal(#"launch""#) { return .launch }
            case UInt8(ascii: "n"): if object.literal(#"notification""#) { return .notification }
            case UInt8(ascii: "p"): if object.literal(#"print""#) { return .print }
            case UInt8(ascii: "s"):
                if object.literal(#"share.send""#) { return .shareSend }
                if object.literal(#"share.receive""#) { return .shareReceive }
                if object.literal(#"screen-capture""#) { return .screenCapture }
            default: break
            }
            return nil
        }

        /// Reads the members in any order (each once), as `read` describes.
        static func readAnyOrder(_ parameters: UnsafeRawBufferPointer) -> Self? {
            guard var object = JSONPlainObject(parameters) else { return nil }
            var session: UnsafeRawBufferPointer?
            var action: Action?
            // Neither can be null here, so nil means "not seen yet".
            var target: UnsafeRawBufferPointer?
            var size: Int?
            while object.hasMember {
                // Each key is compared with the names not read yet, in the order the SDK writes
                // them (sorted): there, each matches at the first comparison. A key that is none
                // of them — another name, or one read already — is refused.
                if action == nil, object.key("action") {
                    guard let name = object.asciiString(), let named = Self.action(named: name) else { return nil }
                    action = named
                } else if session == nil, object.key("session") {
                    guard let id = object.asciiString() else { return nil }
                    session = id
                } else if size == nil, object.key("size") {
                    guard let integer = object.integer() else { return nil }
                    size = integer
                } else if target == nil, object.key("target") {
                    guard let text = object.utf8String() else { return nil }
                    target = text
                } else {
                    return nil
                }
            }
            guard let session, let action else { return nil }
            return Self(session: session, sessionIsKnown: false, action: action,
                        target: target?.assumingMemoryBound(to: UInt8.self), size: size)
        }

        /// The action `name` is the raw value of, compared as bytes: no `String` is made for
        /// it. Told by its length first; an action missing here would only go the
        /// general way (`DecideFastPathTests` checks that every one is read).
        private static func action(named name: UnsafeRawBufferPointer) -> Action? {
            func named(_ action: Action, _ rawValue: StaticString) -> Action? {
                JSONPlainObject.equal(name, rawValue) ? action : nil
            }
            return switch name.count {
            case 5: named(.print, "print")
            case 6: named(.launch, "launch")
            case 10: named(.shareSend, "share.send")
            case 11: named(.fileExport, "file.export")
            case 12: named(.notification, "notification")
            case 13: named(.shareReceive, "share.receive")
            case 14: named(.clipboardCopy, "clipboard.copy") ?? named(.screenCapture, "screen-capture")
            case 15: named(.clipboardPaste, "clipboard.paste")
            default: nil
            }
        }
    }
}
