import BusTestSupport
import Foundation
import Testing

/// `nearplay air` and the sim backend of `scan`, run as a user would.
@Suite(.timeLimit(.minutes(5))) struct AirCLITests {
    static var executable: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("nearplay")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/nearplay").path
    }

    /// A running `nearplay`; its output is read once it has exited.
    final class Command: @unchecked Sendable {
        let process: SpawnedProcess

        init(_ arguments: [String]) throws {
            try #require(FileManager.default.isExecutableFile(atPath: AirCLITests.executable),
                         "nearplay is not built at \(AirCLITests.executable): run `swift build`")
            process = try SpawnedProcess(AirCLITests.executable, arguments)
        }

        func signal(_ number: Int32) async -> (status: Int32, stdout: String, stderr: String) {
            await process.interrupt(with: number)
        }

        func finish() async -> (status: Int32, stdout: String, stderr: String) {
            await process.finish()
        }
    }

    static let scenario = """
        {"sigma": 1, "devices": {"bob": {"waypoints": [[0, 0, 0]]}},
         "beacons": [{"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 1, "minor": 2, "waypoints": [[0, 1, 0]]}]}
        """

    @Test func airServesAScannerAndRefusesAnUnknownDevice() async throws {
        let socket = temporarySocketPath()
        let scenarioFile = NSTemporaryDirectory() + "/room-\(UUID().uuidString).json"
        try Self.scenario.write(toFile: scenarioFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: scenarioFile) }
        let air = try Command(["air", "--scenario", scenarioFile, "--socket", socket])
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: socket), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }

        let scan = try Command(["scan", "--backend", "sim", "--air-socket", socket, "--device", "bob", "--json"])
        try await Task.sleep(for: .milliseconds(1500))
        let scanned = await scan.signal(SIGINT)
        #expect(scanned.status == 0, "\(scanned.stderr)")
        #expect(scanned.stdout.contains(#""event":"enter","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2""#), "\(scanned.stdout)")

        let refused = await (try Command(["scan", "--backend", "sim", "--air-socket", socket, "--device", "dave"])).finish()
        #expect(refused.status == 69)
        #expect(refused.stderr.contains("does not know the device “dave”"), "\(refused.stderr)")

        let stopped = await air.signal(SIGTERM)
        #expect(stopped.status == 0)
        #expect(stopped.stdout == "air listening on \(socket)\n")
        #expect(!FileManager.default.fileExists(atPath: socket))
        rmdir((socket as NSString).deletingLastPathComponent)
    }

    @Test func airNamesTheFieldOfABadScenario() async throws {
        let scenarioFile = NSTemporaryDirectory() + "/bad-\(UUID().uuidString).json"
        try #"{"devices": {"alice": {"waypoints": [[0, 12, 0], [8, 1.5]]}}}"#.write(toFile: scenarioFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: scenarioFile) }
        let run = await (try Command(["air", "--scenario", scenarioFile, "--socket", temporarySocketPath()])).finish()
        #expect(run.status == 65)
        #expect(run.stderr == "nearplay: error: \(scenarioFile): devices.alice.waypoints[1]: expected [seconds, x, y]\n")
    }
}
