import JSONCore
import ProctorPolicy
import ProctorProtocol
import Testing

/// `Agent.Decide` read from bytes for the direct way: the same values as the general reading
/// (`DecideReplyTests`: the reply written).
@Suite struct DecideFastPathTests {
    private static func readDirectly(_ text: String) throws -> Agent.Decide.Request? {
        var reader = JSONPullReader(Array(text.utf8))
        return try Agent.Decide.Request.read(from: &reader)
    }

    @Test(arguments: [
        #"{"session":"s","action":"launch"}"#,
        #"{"size":-3,"target":"","action":"share.send","session":"abc"}"#,
        #"{"session":"\u0041\n\"\\\/","action":"file.export","target":"/home/ü/€ 𝄞.txt","size":4.2e1}"#,
    ])
    func whatTheDirectReaderTakesItReadsAsTheGeneralReaderDoes(_ text: String) throws {
        let general = try Agent.Decide.Request(try #require(try JSONParser.parse(Array(text.utf8)).objectValue))
        #expect(try Self.readDirectly(text) == general)
    }

    @Test(arguments: [
        #"{"session":"s","action":"launch","session":"t"}"#, #"{"session":"s","action":"launch","extra":1}"#,
        #"{"session":"s","action":"fly"}"#, #"{"session":"s","action":"launch","target":null}"#,
        #"{"session":"s","action":"launch","size":0.5}"#, #"{"session":"s"}"#, #"{"action":"launch"}"#, "[]", "null",
    ])
    func anythingElseIsLeftToTheGeneralReader(_ text: String) throws {
        #expect(try Self.readDirectly(text) == nil)
    }
}
