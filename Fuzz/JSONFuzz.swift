// libFuzzer target for the JSON parser alone (every byte any client or file sends goes
// through it first). Properties, for any input:
// - the entry points agree: `parse` and `parseDocument` accept the same documents, with
//   the same value, and refuse the rest with the same message at the same place
//   (PolicyFragment.parse relies on it: it parses fast, then again with positions), and
//   `syntaxError` gives exactly `parseDocument`'s error (path included), nil when it accepts;
// - a refusal points inside the input (or just past its end), at a line and column ≥ 1;
// - the canonical round trip holds: parse → serialise → parse gives an equal value, and
//   serialising that value again gives the same bytes (the canonical form is stable);
// - the location of a value of an accepted document (the first 64 visited) lies inside it.
// Not part of a SwiftPM target; `Fuzz/build.sh json` builds it (Fuzz/README.md).
import JSONCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let value: JSONValue
    let document: JSONDocument
    do {
        value = try JSONParser.parse(bytes)
    } catch {
        check(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside the input")
        check(error.location.line >= 1 && error.location.column >= 1, "error location \(error.location)")
        do {
            _ = try JSONParser.parseDocument(bytes)
            fail("parseDocument accepted what parse refused: \(error)")
        } catch let documentError {
            // Only parseDocument tracks the path, so the paths may differ.
            check(documentError.message == error.message && documentError.offset == error.offset
                  && documentError.location == error.location,
                  "parse and parseDocument refuse differently: \(error) / \(documentError)")
            check(JSONParser.syntaxError(in: bytes) == documentError,
                  "syntaxError says \(String(describing: JSONParser.syntaxError(in: bytes))), parseDocument \(documentError)")
        }
        return 0
    }
    do {
        document = try JSONParser.parseDocument(bytes)
    } catch {
        fail("parseDocument refused what parse accepted: \(error)")
    }
    check(document.value == value, "parse and parseDocument read different values")
    check(JSONParser.syntaxError(in: bytes) == nil, "syntaxError refused what parse accepted")

    let canonical = value.serialized()
    let reparsed: JSONValue
    do {
        reparsed = try JSONParser.parse(canonical)
    } catch {
        fail("the canonical form does not parse: \(error)")
    }
    check(reparsed == value, "the canonical form reads back as a different value")
    check(reparsed.serialized() == canonical, "the canonical form is not stable")

    var budget = 64
    let lines = bytes.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
    visit(value, at: .root, in: document, lines: lines, budget: &budget)
    return 0
}

/// Asks the document where values start; each answer must be a line of the input.
private func visit(_ value: JSONValue, at path: JSONPath, in document: JSONDocument, lines: Int, budget: inout Int) {
    guard budget > 0 else { return }
    budget -= 1
    let location = document.location(of: path)
    check((1...lines).contains(location.line) && location.column >= 1, "location \(location) of \(path)")
    switch value {
    case .array(let elements):
        for (index, element) in elements.enumerated() {
            visit(element, at: path.appending(index: index), in: document, lines: lines, budget: &budget)
        }
    case .object(let members):
        for (key, member) in members {
            visit(member, at: path.appending(key), in: document, lines: lines, budget: &budget)
        }
    default:
        break
    }
}
