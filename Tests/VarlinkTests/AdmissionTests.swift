import JSONCore
import Testing
@testable import Varlink

@Suite struct AdmissionTests {
    /// The ping interface, open only to "admin".
    private func guardedConnection(for name: String) throws -> VarlinkConnection<Peer> {
        let service = try makeService(admission: { peer throws(VarlinkError) in
            guard peer.name == "admin" else { throw .permissionDenied }
        })
        return VarlinkConnection(service: service, context: Peer(name: name))
    }

    @Test func aRefusedCallerLearnsNothingAboutItsParametersOrTheMethod() throws {
        let stranger = try guardedConnection(for: "mallory")
        for (method, parameters) in [("org.example.ping.Ping", ["text": 5] as [String: JSONValue]),
                                     ("org.example.ping.Ping", [:]), ("org.example.ping.Unimplemented", [:]),
                                     ("org.example.ping.Count", ["count": 1])] {
            let output = stranger.receive(call(method, parameters))
            #expect(try replies(output.bytes) == [VarlinkReply(error: .permissionDenied)], "\(method) \(parameters)")
        }
        // Unknown methods are unknown to everyone, and the service interface stays open.
        #expect(try replies(stranger.receive(call("org.example.ping.Nope")).bytes) == [VarlinkReply(error: .methodNotFound("org.example.ping.Nope"))])
        #expect(try replies(stranger.receive(call("org.varlink.service.GetInfo")).bytes).first?.error == nil)
    }

    @Test func anAdmittedCallerIsCheckedAsBefore() throws {
        let admin = try guardedConnection(for: "admin")
        #expect(try replies(admin.receive(call("org.example.ping.Ping", ["text": 5])).bytes)
            == [VarlinkReply(error: .invalidParameter("text"))])
        #expect(try replies(admin.receive(call("org.example.ping.Ping", ["text": "hi"])).bytes)
            == [VarlinkReply(parameters: ["text": "hi", "peer": "admin"])])
    }
}
