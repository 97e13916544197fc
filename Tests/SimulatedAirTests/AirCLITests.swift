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

        init(_ arguments: [String], input: Bool = false) throws {
            try #require(FileManager.default.isExecutableFile(atPath: AirCLITests.executable),
                         "nearplay is not built at \(AirCLITests.executable): run `swift build`")
            process = try SpawnedProcess(AirCLITests.executable, arguments, input: input)
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
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: socket), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }

        let scan = try Command(["scan", "--backend", "sim", "--air-socket", socket, "--device", "bob", "--json"])
        // Interrupted once it has heard the beacon (a fixed wait lost the race on a loaded machine,
        // where the scanner had not yet started when SIGINT came).
        #expect(await scan.process.waitForOutput(timeout: 60) { $0.contains(#""event":"enter""#) })
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

    /// `calibrate ranging --live` as a person runs it: the beacon held at 1 m, Enter, then at 3 m,
    /// Enter. On the air the receiver hears 4 dB low and the room's exponent is 2.4; the fit
    /// must find both.
    @Test func calibrateRangingLiveFitsTheReceiverAndTheRoom() async throws {
        let socket = temporarySocketPath()
        let folder = NSTemporaryDirectory() + "/calibrate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
            {"exponent": 2.4, "sigma": 1.5, "loss": 0.1,
             "devices": {"rx": {"waypoints": [[0, 0, 0]], "rxOffset": -4},
                         "near": {"waypoints": [[0, 1, 0]]}, "far": {"waypoints": [[0, 0, 3]]}}}
            """.write(toFile: folder + "/room.json", atomically: true, encoding: .utf8)
        let air = try Command(["air", "--scenario", folder + "/room.json", "--socket", socket])
        defer { air.process.kill() }
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: socket), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        func beacon(at device: String) throws -> Command {
            try Command(["advertise", "--backend", "sim", "--air-socket", socket, "--device", device,
                         "--uuid", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--major", "7", "--minor", "9", "--interval", "50"])
        }
        let near = try beacon(at: "near")
        let calibrate = try Command([
            "calibrate", "ranging", "--live", "--at", "1", "--at", "3", "--seconds", "3", "--spot-shadowing", "0",
            "--backend", "sim", "--air-socket", socket, "--device", "rx",
            "--receiver", "rx", "--profiles", folder + "/profiles.json", "--json",
        ], input: true)
        #expect(await calibrate.process.waitForOutput { $0.contains("Hold the beacon 1 m") }, "\(calibrate.process.standardError)")
        try await Task.sleep(for: .milliseconds(300))
        calibrate.process.send("\n")
        #expect(await calibrate.process.waitForOutput { $0.contains("Hold the beacon 3 m") }, "\(calibrate.process.standardError)")
        #expect(await near.signal(SIGTERM).status == 0)
        let far = try beacon(at: "far")
        defer { far.process.kill() }
        try await Task.sleep(for: .milliseconds(300))
        calibrate.process.send("\n")
        let run = await calibrate.finish()
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("Calibrating with E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/7/9"), "\(run.stderr)")
        struct Profile: Decodable { var rssiOffset: Double; var exponent: Double; var distances: [Double]; var readings: Int }
        let profile = try JSONDecoder().decode(Profile.self, from: Data(run.stdout.utf8))
        #expect(profile.distances == [1, 3])
        #expect(profile.readings > 40, "\(profile.readings) readings")
        #expect(abs(profile.exponent - 2.4) < 0.3, "exponent \(profile.exponent)")
        #expect(abs(profile.rssiOffset - 4) < 1.5, "offset \(profile.rssiOffset)")
        #expect(FileManager.default.fileExists(atPath: folder + "/profiles.json"))

        // Nothing in the air: a sentence that says what to check, not a profile.
        #expect(await far.signal(SIGTERM).status == 0)
        let silent = try Command([
            "calibrate", "ranging", "--live", "--at", "1", "--at", "3", "--seconds", "1",
            "--backend", "sim", "--air-socket", socket, "--device", "rx", "--profiles", folder + "/other.json",
        ], input: true)
        silent.process.send("\n")
        let refused = await silent.finish()
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Heard no readings of any beacon"), "\(refused.stderr)")
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
