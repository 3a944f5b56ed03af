import Dispatch
import Foundation
import JSONCore
import LinuxIO
import ProctorDaemon
import ProctorProtocol
import Testing
import TestSupport
import Varlink

/// The daemon the handler fuzz target drives: real handlers and store, no sockets.
@Suite struct SocketlessDaemonTests {
    private static let policy = """
        {"schema": 1, "version": "one", "apps": {"io.proctor.test.notes": {"state": "authorized",
          "match": {"executable": "/usr/bin/notes"}, "dlp": {"print": "block"}}}}
        """

    private func directory() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(prefix: "proctor-socketless")
        try FileManager.default.createDirectory(atPath: directory.path + "/config/policy.d", withIntermediateDirectories: true)
        try Data(Self.policy.utf8).write(to: directory.appending("config/policy.d/00.json"))
        return directory
    }

    /// The test policy as version "two", as an ApplyPolicy call carries it.
    private static func policyTwo() throws -> JSONValue {
        try JSONParser.parse(Array(policy.replacingOccurrences(of: "\"one\"", with: "\"two\"").utf8))
    }

    /// Sends one call and returns the replies it got once the daemon settled.
    private func call(_ daemon: SocketlessDaemon, _ connection: SocketlessDaemon.Connection, _ method: String,
                      _ parameters: [String: JSONValue] = [:]) throws -> [VarlinkReply] {
        var message: [UInt8] = []
        VarlinkCall(method: method, parameters: parameters).encode(to: &message)
        connection.send(message)
        try daemon.settle()
        var decoder = VarlinkFrameDecoder()
        decoder.append(connection.takeOutput().bytes)
        var replies: [VarlinkReply] = []
        while let reply = try decoder.nextReply() { replies.append(reply) }
        return replies
    }

    @Test func anAppRegistersAndIsAnsweredByThePolicy() throws {
        let directory = try directory()
        defer { directory.remove() }
        let daemon = try SocketlessDaemon(directory: directory.path)
        let agent = daemon.connect(to: .agent)
        let registered = try call(daemon, agent, Agent.Register.qualifiedName, ["appId": "io.proctor.test.notes"])
        let session = try #require(registered.first?.parameters["session"]?.stringValue)
        let decided = try call(daemon, agent, Agent.Decide.qualifiedName, ["session": .string(session), "action": "print"])
        #expect(decided.first?.parameters["allowed"] == .bool(false))
        let unknown = try call(daemon, agent, Agent.Register.qualifiedName, ["appId": "io.proctor.test.other"])
        #expect(unknown.first?.error == "io.proctor.Agent.UnknownApp")
        agent.close()
    }

    @Test func anAdminCallFromAStrangerIsRefused() throws {
        let directory = try directory()
        defer { directory.remove() }
        let daemon = try SocketlessDaemon(directory: directory.path)
        let stranger = daemon.connect(to: .admin, administrator: false)
        #expect(try call(daemon, stranger, Admin.Status.qualifiedName).first?.error == "org.varlink.service.PermissionDenied")
        stranger.close()
    }

    @Test func anAppliedPolicyIsInForceAfterTheReplyAndAfterARestart() throws {
        let directory = try directory()
        defer { directory.remove() }
        var daemon = try SocketlessDaemon(directory: directory.path)
        let admin = daemon.connect(to: .admin)
        let pushed = try Self.policyTwo()
        let applied = try call(daemon, admin, Admin.ApplyPolicy.qualifiedName, ["policy": pushed])
        let reply = try Admin.AppliedPolicy(try #require(applied.first).parameters)
        #expect(reply.version == "two")
        #expect(daemon.policyInForce.sha256 == reply.sha256)
        admin.close()
        try daemon.stop()
        daemon = try SocketlessDaemon(directory: directory.path)
        #expect(daemon.policyInForce.sha256 == reply.sha256)
    }

    /// A stopped daemon's lock can linger in a child this process forked (until its exec
    /// closes the copy): a daemon started in-process on that directory waits for it.
    @Test func aLockThisProcessStillHoldsIsWaitedFor() throws {
        let directory = try directory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true)
        let lockPath = directory.path + "/run/proctord.lock"
        let (taken, released) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        DispatchQueue.global().async {
            let lingering = try? LockFile.acquire(path: lockPath)
            taken.signal()
            usleep(300_000)
            withExtendedLifetime(lingering) {}
            released.signal()
        }
        taken.wait()
        let daemon = try SocketlessDaemon(directory: directory.path)
        #expect(released.wait(timeout: .now()) == .success)
        try daemon.stop()
    }

    /// Another process's lock is refused at once: that is another proctord.
    @Test func anotherProcessesLockIsRefusedAtOnce() throws {
        let directory = try directory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true)
        // One process, holding the lock on a descriptor of its own: sh takes it, then becomes sleep.
        let lockPath = directory.path + "/run/proctord.lock"
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 9>>\"$0\" && flock 9 && exec sleep 30", lockPath]
        try holder.run()
        defer { holder.terminate(); holder.waitUntilExit() }
        var held = false
        for _ in 0..<400 where !held {
            // A probe that writes nothing: LockFile would record this process as the holder.
            let probe = open(lockPath, O_RDONLY | O_CLOEXEC)
            held = probe >= 0 && flock(probe, LOCK_EX | LOCK_NB) != 0
            if probe >= 0 { close(probe) }
            if !held { usleep(25_000) }
        }
        try #require(held, "sh did not take the lock")
        let began = Date()
        #expect(throws: SocketlessDaemon.StartFailure.self) { try SocketlessDaemon(directory: directory.path) }
        #expect(Date().timeIntervalSince(began) < 5)
    }

    /// Policy changes are compiled on the caller's thread here, and finish on the loop: two
    /// sent at once are answered in order, after one settle, and the second one is in force.
    @Test func aReloadAndAnApplySentTogetherAreBothAnsweredInOrder() throws {
        let directory = try directory()
        defer { directory.remove() }
        var messages: [UInt8] = []
        VarlinkCall(method: Admin.Reload.qualifiedName, parameters: [:]).encode(to: &messages)
        VarlinkCall(method: Admin.ApplyPolicy.qualifiedName, parameters: ["policy": try Self.policyTwo()]).encode(to: &messages)
        let daemon = try SocketlessDaemon(directory: directory.path)
        let admin = daemon.connect(to: .admin)
        admin.send(messages)
        try daemon.settle()
        var decoder = VarlinkFrameDecoder()
        decoder.append(admin.takeOutput().bytes)
        let reloaded = try Admin.Reload.Reply(try #require(try decoder.nextReply()).parameters)
        let applied = try Admin.AppliedPolicy(try #require(try decoder.nextReply()).parameters)
        #expect(reloaded.result.ok && reloaded.policy.version == "one")
        #expect(applied.version == "two")
        #expect(daemon.policyInForce.sha256 == applied.sha256)
        admin.close()
    }
}
