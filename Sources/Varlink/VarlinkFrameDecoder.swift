public import JSONCore
import Glibc

/// Splits a Varlink byte stream into NUL-terminated JSON messages.
///
/// Feed it whatever each read returned (`append`), then pull messages until it returns `nil`.
/// Bytes are kept in one buffer that is compacted only when the consumed prefix is large, so
/// a read carrying several small calls costs no buffer copy per message. It never holds more
/// than `maxMessageBytes` of an unterminated message: past that it fails, and stays failed.
public struct VarlinkFrameDecoder: Sendable {
    /// The largest message accepted, NUL excluded.
    public let maxMessageBytes: Int
    private var buffer: [UInt8] = []
    /// Start of the first unconsumed message.
    private var start = 0
    /// Where the search for the next NUL resumes (all bytes in `start..<scanned` are non-NUL).
    private var scanned = 0
    private var failure: VarlinkFrameError?
    /// Bytes dropped from the front of `buffer` since the stream began.
    private var dropped = 0
    /// Where in the whole stream the last message returned lies, its NUL included (offsets
    /// count every byte appended since the decoder was made).
    public private(set) var lastFrameStreamRange: Range<Int> = 0..<0
    /// Buffer capacity kept while no message is pending.
    static let idleCapacity = 4096

    public init(maxMessageBytes: Int = 1 << 20) {
        precondition(maxMessageBytes > 0, "maxMessageBytes must be positive")
        self.maxMessageBytes = maxMessageBytes
    }

    var bufferCapacity: Int { buffer.capacity }

    /// Bytes received but not yet returned as messages.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes. After a failure the bytes are dropped.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        // One dynamic call, then a memcpy: generic element-wise copying across the module
        // boundary costs microseconds per kilobyte.
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil { Array(bytes).withUnsafeBytes { append($0) } }
    }

    /// Adds received bytes, for example straight from a read buffer. After a failure the bytes are dropped.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        if start >= 4096, start * 2 >= buffer.count {
            buffer.removeSubrange(0..<start)
            dropped += start
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The bytes of the next complete message (without its NUL), or `nil` when none is complete yet.
    public mutating func nextFrame() throws(VarlinkFrameError) -> ArraySlice<UInt8>? {
        if let failure { throw failure }
        let end = buffer.count
        let index = Self.firstNUL(in: buffer, from: scanned) ?? end
        guard index < end else {
            if start == end {
                // Everything consumed: an idle connection should not keep a large read's buffer.
                if buffer.capacity > Self.idleCapacity { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
                dropped += start
                start = 0
                scanned = 0
                return nil
            }
            scanned = end
            if end - start > maxMessageBytes { try fail(.messageTooLarge(limit: maxMessageBytes)) }
            return nil
        }
        if index - start > maxMessageBytes { try fail(.messageTooLarge(limit: maxMessageBytes)) }
        let frame = buffer[start..<index]
        lastFrameStreamRange = (dropped + start)..<(dropped + index + 1)
        start = index + 1
        scanned = start
        return frame
    }

    /// The next complete message as a JSON object, or `nil` when none is complete yet.
    public mutating func nextMessage() throws(VarlinkFrameError) -> [String: JSONValue]? {
        guard let frame = try nextFrame() else { return nil }
        return try message(in: frame)
    }

    /// `frame`, a message `nextFrame()` returned, parsed as a JSON object; anything else
    /// fails the stream.
    public mutating func message(in frame: ArraySlice<UInt8>) throws(VarlinkFrameError) -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(frame))
        } catch {
            // Only a failed parse pays for the UTF-8 check that tells the two causes apart.
            if String(validating: frame, as: UTF8.self) == nil { try fail(.invalidUTF8) }
            if error.isDuplicateKey, let parameter = Self.parameterRepeatingAKey(in: frame) {
                try fail(.duplicateMember(parameter: parameter, error))
            }
            try fail(.invalidJSON(error))
        }
        guard case .object(let members) = value else { try fail(.notAnObject(found: value.typeDescription)) }
        return members
    }

    /// The parameter of a message that holds a repeated key, or the protocol member repeated
    /// (such as `method`), from the path the parser reached; parsed again, as `parse` does not
    /// track it, only for such a message.
    private static func parameterRepeatingAKey(in frame: ArraySlice<UInt8>) -> String? {
        guard let components = JSONParser.syntaxError(in: Array(frame))?.path.components,
              case .key(let member)? = components.first else { return nil }
        guard member == "parameters", components.count > 1, case .key(let parameter) = components[1] else { return member }
        return parameter
    }

    /// The next complete message decoded as a call. A message that is a JSON object but not a
    /// valid call throws without failing the stream.
    public mutating func nextCall() throws(VarlinkFrameError) -> VarlinkCall? {
        guard let message = try nextMessage() else { return nil }
        return try VarlinkCall(message: message)
    }

    /// The next complete message decoded as a reply.
    public mutating func nextReply() throws(VarlinkFrameError) -> VarlinkReply? {
        guard let message = try nextMessage() else { return nil }
        return try VarlinkReply(message: message)
    }

    /// The index of the first NUL at or after `start`: `memchr`, as an element-wise loop with
    /// a bounds check per byte was a tenth of the work of answering a `Decide` call.
    private static func firstNUL(in buffer: [UInt8], from start: Int) -> Int? {
        buffer.withUnsafeBytes { bytes in
            guard start < bytes.count, let base = bytes.baseAddress,
                  let found = memchr(base + start, 0, bytes.count - start) else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }

    private mutating func fail(_ error: VarlinkFrameError) throws(VarlinkFrameError) -> Never {
        failure = error
        buffer = []
        start = 0
        scanned = 0
        throw error
    }
}
