import Agent
import BusTestSupport
import DBus
import Foundation
import Testing

/// Desktop notifications, against python-dbusmock's `notification_daemon` on a private session bus.
@Suite(.serialized) struct NotifierTests {
    /// Starts the notification daemon mock on `bus` and waits until it owns its name.
    static func startDaemon(on bus: PrivateBus) async throws -> SpawnedProcess {
        let environment = ProcessInfo.processInfo.environment
        let venv = environment["NEARPLAY_VENV"] ?? repositoryRoot.appendingPathComponent(".venv").path
        guard FileManager.default.isExecutableFile(atPath: venv + "/bin/python") else {
            throw TestEnvironmentError("no Python venv with python-dbusmock at \(venv): run scripts/bootstrap")
        }
        let process = try SpawnedProcess(venv + "/bin/python", ["-m", "dbusmock", "--session", "--template", "notification_daemon"],
                                         environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address], output: .null, errors: .null)
        let control = try await bus.connect()
        defer { control.close() }
        let deadline = Date().addingTimeInterval(20)
        while try await control.nameOwner(of: "org.freedesktop.Notifications") == nil {
            guard process.isRunning, Date() < deadline else {
                throw TestEnvironmentError("python-dbusmock's notification_daemon did not start: run scripts/bootstrap")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return process
    }

    @Test(.timeLimit(.minutes(5))) func notifiesInvitationsGameStartsAndResults() async throws {
        let bus = try await PrivateBus()
        let daemon = try await Self.startDaemon(on: bus)
        defer { daemon.kill() }

        let events = AgentEventBus()
        let notifier = Notifier(address: bus.address, username: "alice")
        let stream = events.subscribe()
        let running = Task { await notifier.run(stream) }
        events.publish(.playerMoved(.init(player: "bob", name: "Bob", distance: 2, zone: .near)))   // not worth a notification
        events.publish(.invitationReceived(from: "bob", game: 7))
        events.publish(.gameStarted(game: 7, plan: nil))
        events.publish(.gameFinished(game: 7, winner: "alice"))
        events.finish()
        await running.value

        // The mock records every call; read them back.
        let control = try await bus.connect()
        defer { control.close() }
        let reply = try await control.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                           interface: "org.freedesktop.DBus.Mock", member: "GetCalls")
        let calls = reply.first?.arrayValue ?? []
        let summaries = calls.compactMap { call -> String? in
            guard let fields = call.structureValue, fields.count == 3, fields[1].stringValue == "Notify",
                  let arguments = fields[2].arrayValue, arguments.count == 8 else { return nil }
            return arguments[3].unwrapped.stringValue
        }
        #expect(summaries == ["Invitation from bob", "Game 7 started", "You won!"])
    }

    @Test func staysSilentWithoutASessionBus() async {
        let notifier = Notifier(address: nil, username: "alice")
        #expect(await notifier.notify(title: "t", body: "b") == nil)
    }
}
