import BusTestSupport
import Foundation
import Testing

/// Runs the built `nearplay` executable as a user would.
@Suite struct CLITests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var executable: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("nearplay")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/nearplay")
    }

    /// Runs `nearplay arguments…` to its end without holding a thread of the task pool.
    static func run(_ arguments: [String]) async throws -> Run {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            Issue.record("nearplay is not built at \(executable.path): run `swift build` (scripts/test does) before the tests")
            throw CocoaError(.fileNoSuchFile)
        }
        let finished = try await SpawnedProcess(executable.path, arguments).finish()
        return Run(status: finished.status, stdout: finished.stdout, stderr: finished.stderr)
    }

    static func temporaryFile(_ contents: String, suffix: String = ".jsonl") throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-\(UUID().uuidString)\(suffix)").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let ad = "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5"

    /// `nearplay lobby` hands over to `nearplay-lobby` beside it, and says what to build when it is not there.
    @Test func lobbyRunsTheLobbyExecutableBesideIt() async throws {
        let help = try await Self.run(["lobby", "serve", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: nearplay lobby serve"))
        #expect(help.stdout.contains("--bcrypt-cost"))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-alone-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let alone = folder.appendingPathComponent("nearplay")
        try FileManager.default.copyItem(at: Self.executable, to: alone)
        let finished = try await SpawnedProcess(alone.path, ["lobby", "serve"]).finish()
        let message = finished.stderr
        #expect(finished.status == 1)
        #expect(message.contains("nearplay-lobby"))
        #expect(message.contains("swift build --product nearplay-lobby"))
    }

    @Test func replayWritesTheEventFormatAndReportsBadLines() async throws {
        let path = try Self.temporaryFile("""
        {"nearplay_trace":1,"created":"2026-01-01T00:00:00Z","source":"cli test"}
        {"t":0.100,"addr":"C0:FF:EE:00:00:01","rssi":-59,"ad":"\(Self.ad)","truth_m":1.0}
        {"t":0.2,"addr":"C0:FF:EE:00:00:01","rssi":"loud","ad":"\(Self.ad)"}
        {"t":0.300,"addr":"C0:FF:EE:00:00:01","rssi":-61,"ad":"\(Self.ad)"}
        """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await Self.run(["replay", "--json", "--range-interval", "0", path])
        #expect(run.status == 65, "a bad line makes the exit status 65")
        #expect(run.stderr.contains("\(path):3: field \"rssi\""))
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0] == #"{"t":0.100,"event":"enter","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","addr":"C0:FF:EE:00:00:01","rssi":-59}"#)
        // At 1 m after one reading (FittedSpread): nearer √(15.2 + 7.5²) = 8.45 dB, farther
        // √(15.2 + 3² + 4²) = 6.34 dB, so 10^(−8.45 / 28) … 10^(6.34 / 28) = 0.50 … 1.68 m.
        #expect(lines[1].hasPrefix(#"{"t":0.100,"event":"range","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","addr":"C0:FF:EE:00:00:01","rssi":-59,"rssi_filtered":-59.0,"distance_m":1.00,"distance_lo_m":0.50,"distance_hi_m":1.68,"zone":"near","truth_m":1.0}"#))
        #expect(lines[2].contains(#""event":"range""#) && !lines[2].contains("truth_m"))
        // The trace ends: the beacon exits at its deadline, last seen (0.3 s) + 2 s (its one
        // 0.2 s gap gives an interval of 0.2 s and a timeout of a few intervals, raised to the floor).
        #expect(lines[3] == #"{"t":2.300,"event":"exit","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","addr":"C0:FF:EE:00:00:01"}"#)
    }

    @Test func replayPrintsATableByDefault() async throws {
        let path = try Self.temporaryFile("{\"nearplay_trace\":1}\n{\"t\":0,\"addr\":\"C0:FF:EE:00:00:01\",\"rssi\":-70,\"ad\":\"\(Self.ad)\"}\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await Self.run(["replay", path])
        #expect(run.status == 0)
        let rows = run.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 4)
        #expect(rows[0].hasPrefix("t ") && rows[0].contains("event") && rows[0].contains("distance (68 %)"))
        #expect(rows[1].contains("enter") && rows[1].contains("-70"))
        // -70 dBm against -59 at 1 m with n = 2.8: 10^(11/28) = 2.47 m, near. The interval after one
        // reading (FittedSpread): nearer, the filter's 15.2 dB² alone (the table is 0 dB at 2–4 m),
        // 3.90 dB; farther, 15.2 dB² with the table's 13.96 dB at 11 dB and the first reading's
        // 4 dB, 15.03 dB; so 10^((11 − 3.90) / 28) … 10^((11 + 15.03) / 28) = 1.79 … 8.51 m.
        #expect(rows[2].contains("range") && rows[2].contains("-70.0") && rows[2].contains("2.5 m (1.8–8.5)") && rows[2].contains("near"))
        #expect(rows[3].contains("30.000") && rows[3].contains("exit"))
    }

    @Test func usageErrorsExit64WithAMessage() async throws {
        let noFiles = try await Self.run(["replay"])
        #expect(noFiles.status == 64)
        let badOption = try await Self.run(["replay", "--exponent=-1", "x.jsonl"])
        #expect(badOption.status == 64)
        #expect(badOption.stderr.contains("--exponent must be between 0.5 and 10"))
        let notHex = try await Self.run(["decode", "zz"])
        #expect(notHex.status == 64)
        #expect(notHex.stderr.contains("not hex"))
    }

    @Test func missingFilesExit66AndForeignFilesExit65() async throws {
        let missing = try await Self.run(["replay", "/nonexistent/trace.jsonl"])
        #expect(missing.status == 66, "a missing input is EX_NOINPUT")
        #expect(missing.stderr.contains("/nonexistent/trace.jsonl: no such file"))
        let path = try Self.temporaryFile("hello\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let foreign = try await Self.run(["replay", path])
        #expect(foreign.status == 65)
        #expect(foreign.stderr.contains("is not a Nearplay trace or btsnoop capture"))
    }

    @Test func decodeSaysWhatAFrameIsOrWhyNot() async throws {
        let ok = try await Self.run(["decode", Self.ad])
        #expect(ok.status == 0)
        #expect(ok.stdout.contains("iBeacon: UUID E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major 1, minor 2, measured power -59 dBm"))
        let short = try await Self.run(["decode", "4c000215426c7565436861726d426561636f6e73"])
        #expect(short.status == 65)
        #expect(short.stdout.contains("iBeacon frame at byte 4 needs 21 bytes but only 16 remain"))
        let hci = try await Self.run(["decode", "043e2b02010301e1acca3dea0d1f02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34d1"])
        #expect(hci.stdout.contains("address 0D:EA:3D:CA:AC:E1 (random), RSSI -47 dBm"))
        #expect(hci.stdout.contains("Exposure Notification"))
        let badH4 = try await Self.run(["decode", "413e41020103013594efcdd61c19"])
        #expect(badH4.status == 65)
        #expect(badH4.stdout.contains("not an HCI LE advertising report event"))
    }

    @Test func simulateThenEvalRoundTrips() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-sim-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let simulate = try await Self.run(["simulate", "--seed", "3", "--loss", "0.33", "-o", path])
        #expect(simulate.status == 0, "\(simulate.stderr)")
        let again = try await Self.run(["simulate", "--seed", "3", "--loss", "0.33"])
        let written = try String(contentsOfFile: path, encoding: .utf8)
        // Same seed, same lines (the header's creation time aside).
        #expect(written.split(separator: "\n").dropFirst() == again.stdout.split(separator: "\n").dropFirst())
        let eval = try await Self.run(["eval", "--json", path])
        #expect(eval.status == 0, "\(eval.stderr)")
        let rows = eval.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(rows.map { $0["model"] as? String } == ["nearplay", "altbeacon", "log-distance-n2"])
        let report = try #require(rows.first?["report"] as? [String: Any])
        #expect((report["medianAbsoluteError"] as? Double).map { $0 < 2 } == true)
        #expect((report["presence"] as? [String: Any])?["falseExits"] as? Int == 0)
    }

    /// Two recordings of one family: pooled into one row, a two-point calibration from each,
    /// and a plot per recording.
    @Test func evalPoolsByFamilyCalibratesAndPlots() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-eval-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A beacon held at 1 m, then at 3 m, in a room with exponent 2 (the model assumes 2.8).
        let script = folder + "/still.json"
        try #"{"beacons":[{"beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","interval":0.2,"waypoints":[[0,1],[30,1],[30.01,3],[60,3]]}]}"#
            .write(toFile: script, atomically: true, encoding: .utf8)
        for (name, seed) in [("room-a", "1"), ("room-b", "2")] {
            let simulate = try await Self.run(["simulate", "--script", script, "--exponent", "2", "--sigma", "3", "--seed", seed,
                                         "-o", folder + "/\(name).jsonl"])
            #expect(simulate.status == 0, "\(simulate.stderr)")
        }
        let plots = folder + "/plots"
        // Clear simulated air with no lasting shadowing: a plain fit (--spot-shadowing 0).
        let run = try await Self.run(["eval", "--calibrate-from", "each", "--spot-shadowing", "0", "--plot", plots, folder + "/room-a.jsonl", folder + "/room-b.jsonl"])
        #expect(run.status == 0, "\(run.stderr)")
        let row = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("| room | 2 |") })
        #expect(run.stdout.contains("calibrated Nearplay"))
        #expect(run.stdout.contains("- zone accuracy at least 85 %: holds"))
        // The calibration finds the room's exponent 2 from each recording.
        #expect(run.stderr.contains("room-a.jsonl: two-point profile at 1 m and 3 m"), "\(run.stderr)")
        let exponents = run.stderr.split(separator: "\n").compactMap { line in line.split(separator: "exponent ").last.flatMap { Double($0) } }
        #expect(exponents.count == 2 && exponents.allSatisfy { abs($0 - 2) < 0.3 }, "\(exponents)")
        // Calibrated, the median error (column 10) is smaller than uncalibrated (column 4).
        let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        let uncalibrated = try #require(Double(cells[3].replacingOccurrences(of: " m", with: "")))
        let calibrated = try #require(Double(cells[9].replacingOccurrences(of: " m", with: "")))
        #expect(calibrated < uncalibrated, "\(row)")
        // One row per recording with --group file, and their interval coverage (the last column) averaged.
        let byFile = try await Self.run(["eval", "--group", "file", folder + "/room-a.jsonl", folder + "/room-b.jsonl"])
        #expect(byFile.status == 0, "\(byFile.stderr)")
        let lines = byFile.stdout.split(separator: "\n")
        let coverages = lines.filter { $0.hasPrefix("| room-") }.compactMap { row -> Double? in
            guard let last = row.split(separator: "|").last else { return nil }
            return Double(last.replacingOccurrences(of: "%", with: "").trimmingCharacters(in: .whitespaces))
        }
        #expect(coverages.count == 2, "\(byFile.stdout)")
        let mean = try #require(lines.first { $0.contains("averaged over the 2 families") }, "\(byFile.stdout)")
        let printed = try #require(mean.firstMatch(of: /truth (\d+) %/).flatMap { Double($0.1) }, "\(mean)")
        #expect(abs(printed - coverages.reduce(0, +) / 2) <= 1, "\(mean) against \(coverages)")
        for name in ["room-a", "room-b"] {
            let svg = try String(contentsOfFile: plots + "/\(name).svg", encoding: .utf8)
            #expect(svg.hasPrefix("<svg") && svg.contains("data-series=\"nearplay\"") && svg.contains("data-series=\"interval\""))
        }
    }

    /// `calibrate ranging` fits and stores a profile; `replay --profile` uses it.
    @Test func calibrateRangingStoresAProfileThatReplayUses() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nearplay-cal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for metres in [1, 3] {
            let script = folder + "/at\(metres).json"
            try #"{"beacons":[{"beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","interval":0.2,"waypoints":[[0,\#(metres)],[30,\#(metres)]]}]}"#
                .write(toFile: script, atomically: true, encoding: .utf8)
            let simulate = try await Self.run(["simulate", "--script", script, "--exponent", "2", "--sigma", "3", "-o", folder + "/at\(metres).jsonl"])
            #expect(simulate.status == 0, "\(simulate.stderr)")
        }
        let profiles = folder + "/profiles.json"
        let calibrate = try await Self.run(["calibrate", "ranging", "--at", "1=\(folder)/at1.jsonl", "--at", "3=\(folder)/at3.jsonl",
                                      "--receiver", "hci0", "--profiles", profiles, "--spot-shadowing", "0", "--json"])
        #expect(calibrate.status == 0, "\(calibrate.stderr)")
        let profile = try #require(try JSONSerialization.jsonObject(with: Data(calibrate.stdout.utf8)) as? [String: Any])
        #expect(abs((profile["exponent"] as? Double ?? 0) - 2) < 0.2)
        #expect(FileManager.default.fileExists(atPath: profiles))
        // Replayed with the profile, the 3 m recording reads about 3 m; without it, the 2.8 model reads short.
        let calibrated = try await Self.run(["replay", "--json", "--profile", "hci0", "--profiles", profiles, folder + "/at3.jsonl"])
        #expect(calibrated.status == 0, "\(calibrated.stderr)")
        let last = try #require(calibrated.stdout.split(separator: "\n").last { $0.contains("\"range\"") })
        let event = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(abs((event["distance_m"] as? Double ?? 0) - 3) < 0.5, "\(last)")
        #expect((event["distance_lo_m"] as? Double ?? 99) < 3 && (event["distance_hi_m"] as? Double ?? 0) > 3)
        let missing = try await Self.run(["replay", "--profile", "nobody", "--profiles", profiles, folder + "/at3.jsonl"])
        #expect(missing.status != 0 && missing.stderr.contains("no profile for that receiver"))
        let oneDistance = try await Self.run(["calibrate", "ranging", "--at", "1=\(folder)/at1.jsonl", "--profiles", profiles])
        #expect(oneDistance.status != 0 && oneDistance.stderr.contains("two or more distances"))
    }

    /// `eval --calibrate-from FILE` and `calibrate ranging` read the same readings from the same
    /// file and fit them with the same prior, whatever model `eval` itself ranges with: both drop
    /// the implausible readings (here, 0 dBm lines at 3 m that would pull that spot's median up)
    /// and neither moves the prior to `eval --exponent`.
    @Test func evalAndCalibrateRangingFitTheSameProfileFromOneFile() async throws {
        var lines = [#"{"nearplay_trace":1,"created":"2026-01-01T00:00:00Z","source":"cli test"}"#]
        let atOne = [-57, -59, -60, -58, -61, -59, -62, -58], atThree = [-72, -70, -74, -71, -73, -69, -75, -72]
        for (index, rssi) in atOne.enumerated() {
            lines.append(#"{"t":\#(Double(index) * 0.5),"addr":"C0:FF:EE:00:00:01","rssi":\#(rssi),"ad":"\#(Self.ad)","truth_m":1}"#)
        }
        for (index, rssi) in (atThree + [0, 0, 0, 0, 0, 0, 0, 0, 0]).enumerated() {
            lines.append(#"{"t":\#(10 + Double(index) * 0.5),"addr":"C0:FF:EE:00:00:01","rssi":\#(rssi),"ad":"\#(Self.ad)","truth_m":3}"#)
        }
        let path = try Self.temporaryFile(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let profiles = try Self.temporaryFile("", suffix: ".json")
        defer { try? FileManager.default.removeItem(atPath: profiles) }
        try FileManager.default.removeItem(atPath: profiles)

        let eval = try await Self.run(["eval", "--calibrate-from", path, "--exponent", "2.2", path])
        #expect(eval.status == 0, "\(eval.stderr)")
        let fitted = try #require(eval.stdout.firstMatch(of: /Calibrated from .*: offset ([-+0-9.]+) dB, exponent ([0-9.]+)/), "\(eval.stdout)")
        let calibrate = try await Self.run(["calibrate", "ranging", "--profiles", profiles, "--json", path])
        #expect(calibrate.status == 0, "\(calibrate.stderr)")
        let profile = try #require(try JSONSerialization.jsonObject(with: Data(calibrate.stdout.utf8)) as? [String: Any])
        let offset = try #require(profile["rssiOffset"] as? Double), exponent = try #require(profile["exponent"] as? Double)
        #expect(String(format: "%+.1f", offset) == String(fitted.1), "eval: \(fitted.0); calibrate ranging: \(profile)")
        #expect(String(format: "%.2f", exponent) == String(fitted.2), "eval: \(fitted.0); calibrate ranging: \(profile)")
        // The 16 plausible readings only, and an exponent near what they say (about 2.2 dB lost per
        // 10·log10 m: the 0 dBm lines, kept, would have made 3 m read stronger than 1 m).
        #expect(profile["readings"] as? Int == atOne.count + atThree.count)
        #expect(exponent > 1.5 && exponent < 3.5, "\(profile)")
    }

    @Test func evalRefusesTracesWithoutTruth() async throws {
        let path = try Self.temporaryFile("{\"nearplay_trace\":1}\n{\"t\":0,\"addr\":\"C0:FF:EE:00:00:01\",\"rssi\":-70,\"ad\":\"\(Self.ad)\"}\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let withTruth = try Self.temporaryFile("{\"nearplay_trace\":1}\n{\"t\":0,\"addr\":\"C0:FF:EE:00:00:01\",\"rssi\":-70,\"ad\":\"\(Self.ad)\",\"truth_m\":3}\n")
        defer { try? FileManager.default.removeItem(atPath: withTruth) }
        let run = try await Self.run(["eval", path, withTruth])
        #expect(run.status == 65)
        #expect(run.stderr.contains("no line carries truth_m"))
        // The file after it is still evaluated: one family row, with one range event.
        let rows = run.stdout.split(separator: "\n").filter { $0.hasPrefix("| nearplay | 1 | 1 |") }
        #expect(rows.count == 1, "\(run.stdout)")
    }

    @Test func offsetsForReceiversNoTraceNamesAreReported() async throws {
        let path = try Self.temporaryFile("{\"nearplay_trace\":1}\n{\"t\":0,\"addr\":\"C0:FF:EE:00:00:01\",\"rssi\":-70,\"ad\":\"\(Self.ad)\",\"rx\":\"pi-4\"}\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await Self.run(["replay", "--json", "--rssi-offset", "pi4=5", "--rssi-offset", "pi-4=2", path])
        #expect(run.status == 0)
        #expect(run.stderr.contains("no trace line names the receiver \"pi4\""))
        #expect(!run.stderr.contains("\"pi-4\""))
        #expect(run.stdout.contains(#""rssi":-68"#) && run.stdout.contains(#""rx":"pi-4""#))
    }

    @Test func optionsOutOfRangeAreUsageErrors() async throws {
        for arguments in [["replay", "--exponent", "0.001", "x"], ["simulate", "--interval", "nan"], ["replay", "--max-exit-timeout", "inf", "x"]] {
            let run = try await Self.run(arguments)
            #expect(run.status == 64, "\(arguments)")
        }
        let unwritable = try await Self.run(["simulate", "-o", "/nonexistent/folder/out.jsonl"])
        #expect(unwritable.status == 73)
    }

    /// `nearplay record` into a folder that does not exist: EX_CANTCREAT before any radio is
    /// touched, naming the file and saying what to do.
    @Test func recordExits73WhenItCannotCreateItsFile() async throws {
        let run = try await Self.run(["record", "/nonexistent/folder/trace.jsonl", "--duration", "1"])
        #expect(run.status == 73, "an output that cannot be created is EX_CANTCREAT: \(run.stderr)")
        #expect(run.stderr.contains("cannot create the trace file /nonexistent/folder/trace.jsonl (no such file or directory)"))
        #expect(run.stderr.contains("create its folder"))
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent/folder/trace.jsonl"))
    }

    @Test func decodeRecognisesAltBeaconManufacturerData() async throws {
        let run = try await Self.run(["decode", "1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c500"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("AltBeacon: manufacturer 0x0118 (Radius Networks)"))
    }
}
