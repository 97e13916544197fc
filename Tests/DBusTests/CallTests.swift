import BusTestSupport
import DBus
import Glibc
import Testing

@Suite struct CallTests {
    static let path: DBusObjectPath = "/org/nearplay/test"

    static func object() -> DBusExportedObject {
        DBusExportedObject(path: path, interfaces: [
            DBusExportedInterface(name: "org.nearplay.Test", methods: [
                DBusExportedMethod(name: "Fail", inputSignature: "s") { call in
                    throw DBusError(name: "org.nearplay.Error.Refused", message: call.body[0].stringValue ?? "")
                },
                DBusExportedMethod(name: "Add", inputSignature: "ii", outputSignature: "i") { call in
                    [.int32(Int32(call.body[0].intValue! + call.body[1].intValue!))]
                },
                DBusExportedMethod(name: "Stall", inputSignature: "") { _ in
                    usleep(5_000_000)  // an unresponsive peer (long, so a loaded machine cannot blur the bounds below)
                    return []
                },
            ]),
        ])
    }

    @Test func returnsTheReplyBody() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(Self.object())
        let reply = try await client.call(destination: server.uniqueName, path: Self.path, interface: "org.nearplay.Test",
                                          member: "Add", body: [.int32(40), .int32(2)])
        #expect(reply == [.int32(42)])
    }

    @Test func throwsTheErrorNameAndMessageThePeerSent() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(Self.object())
        let error = await #expect(throws: DBusError.self) {
            try await client.call(destination: server.uniqueName, path: Self.path, interface: "org.nearplay.Test",
                                  member: "Fail", body: [.string("no slots left")])
        }
        #expect(error == DBusError(name: "org.nearplay.Error.Refused", message: "no slots left"))
    }

    @Test func answersWrongArgumentsUnknownMethodsAndUnknownObjectsWithStandardErrors() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(Self.object())
        let cases: [(DBusObjectPath, String, [DBusValue], String)] = [
            (Self.path, "Add", [.string("forty"), .int32(2)], DBusError.invalidArgumentsName),
            (Self.path, "Multiply", [], DBusError.unknownMethodName),
            ("/org/nearplay/nothing", "Add", [.int32(1), .int32(2)], DBusError.unknownObjectName),
        ]
        for (path, member, body, expected) in cases {
            let error = await #expect(throws: DBusError.self) {
                try await client.call(destination: server.uniqueName, path: path, interface: "org.nearplay.Test",
                                      member: member, body: body)
            }
            #expect(error?.name == expected, "\(member) at \(path)")
        }
    }

    @Test func timesOutWhenThePeerDoesNotAnswer() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(Self.object())
        let started = ContinuousClock.now
        let error = await #expect(throws: DBusError.self) {
            try await client.call(.methodCall(destination: server.uniqueName, path: Self.path,
                                              interface: "org.nearplay.Test", member: "Stall"),
                                  timeout: .milliseconds(200))
        }
        #expect(error?.name == DBusError.noReplyName)
        // Its own 200 ms, not the default 25 s (room left for a loaded machine).
        #expect(started.duration(to: .now) < .seconds(15))
    }

    @Test func cancellingACallStopsWaiting() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(Self.object())
        let started = ContinuousClock.now
        let task = Task {
            try await client.call(.methodCall(destination: server.uniqueName, path: Self.path,
                                              interface: "org.nearplay.Test", member: "Stall"), timeout: .seconds(120))
        }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Well within the call's own 120 s (which a call deaf to cancellation would wait out),
        // with room for a loaded machine.
        #expect(started.duration(to: .now) < .seconds(60))
    }

    @Test func losingTheBusFailsCallsAndReportsTheDisconnection() async throws {
        let bus = try await PrivateBus()
        let client = try await bus.connect()
        let signals = try await client.signals(matching: [MatchRule(interface: "org.nearplay.Test")])
        bus.stop()
        let reason = await client.waitUntilClosed()
        #expect(reason?.isDisconnection == true)
        #expect(!client.isOpen)
        let error = await #expect(throws: DBusError.self) {
            try await client.nameOwner(of: DBusConnection.busName)
        }
        #expect(error?.isDisconnection == true)
        await #expect(throws: DBusError.self) {
            for try await _ in signals {}
        }
    }

    @Test func reportsAMissingBusAsAnError() async throws {
        let error = await #expect(throws: DBusError.self) {
            try await DBusConnection.connect(address: "unix:path=/nonexistent/nearplay/bus")
        }
        #expect(error?.name.hasPrefix("org.freedesktop.DBus.Error") == true)
    }
}
