import JSONCore
import Testing
import Varlink

/// The fake server's reply check is only worth something if it refuses what breaks the
/// interface: these pin that it does.
@Suite struct AdminSchemaTests {
    @Test func theFixturesConformToTheInterface() throws {
        let schema = try AdminSchema()
        let policy = try AdminFixtures.examplePolicy()
        #expect(schema.violation(method: "Status", reply: AdminFixtures.status(policy)) == nil)
        #expect(schema.violation(method: "ListApps", reply: AdminFixtures.apps) == nil)
        #expect(schema.violation(method: "GetApp", reply: AdminFixtures.app) == nil)
        #expect(schema.violation(method: "PolicyHistory", reply: AdminFixtures.history) == nil)
        #expect(schema.violation(method: "Decide", reply: AdminFixtures.decide(allowed: true)) == nil)
        for event in AdminFixtures.events { #expect(schema.violation(method: "Events", reply: ["event": .object(event)]) == nil) }
        #expect(schema.violation(error: AdminFixtures.unknownApp("a.b")) == nil)
    }

    @Test func repliesAndErrorsThatBreakTheInterfaceAreFound() throws {
        let schema = try AdminSchema()
        #expect(schema.violation(method: "Status", reply: ["version": 1]) != nil)
        #expect(schema.violation(method: "Wipe", reply: ["directiveId": "w-1"]) != nil)
        #expect(schema.violation(method: "Wipe", reply: ["directiveId": "w-1", "deliveredTo": 1, "extra": true]) != nil)
        #expect(schema.violation(method: "ListApps", reply: ["apps": [["appId": "a", "inPolicy": true, "state": "sleeping", "connectedSessions": 0]]]) != nil)
        #expect(schema.violation(method: "Nonexistent", reply: [:]) != nil)
        #expect(schema.violation(error: VarlinkError(name: "io.proctor.Admin.UnknownApp", parameters: ["app": "a"])) != nil)
        #expect(schema.violation(error: VarlinkError(name: "io.proctor.Admin.NoSuchError")) != nil)
    }
}
