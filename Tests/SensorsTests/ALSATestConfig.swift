import Foundation
import Testing
@testable import Sensors

/// An ALSA configuration for the whole test process: `type file` PCMs whose `infile`s are
/// headerless S16_LE mono audio written here, reached through `ALSA_CONFIG_PATH`.
///
/// alsa-lib reads `ALSA_CONFIG_PATH` process-wide, so every PCM the tests need lives in this one
/// file, written and exported once before any test opens a PCM; the tests then run in parallel.
/// The config defines `null` itself instead of including the system alsa.conf, so the tests see
/// no user or system configuration.
enum ALSATestConfig {
    /// PCM name → the audio its capture side reads.
    static let tones: [String: [UInt8]] = [
        // 1 kHz at half scale: peak −6.02 dBFS, RMS −9.03 dBFS.
        "nearplaytest": sineBytes(frequency: 1000, amplitude: 16384, seconds: 1),
        // 440 Hz at 1/100 of full scale: peak −40 dBFS, RMS −43.01 dBFS.
        "nearplayquiet": sineBytes(frequency: 440, amplitude: 327.68, seconds: 1),
    ]

    /// The folder the config and audio live in (kept for the life of the process).
    static let folder: String = {
        let directory = NSTemporaryDirectory() + "/nearplay-alsa-\(getpid())-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var config = "pcm.null {\n  type null\n}\n"
        for (name, bytes) in tones.sorted(by: { $0.key < $1.key }) {
            let audio = "\(directory)/\(name).raw"
            try! Data(bytes).write(to: URL(fileURLWithPath: audio))
            config += """
            pcm.\(name) {
              type file
              slave.pcm "null"
              file "/dev/null"
              infile "\(audio)"
              format "raw"
            }

            """
        }
        try! config.write(toFile: directory + "/asound.conf", atomically: true, encoding: .utf8)
        setenv("ALSA_CONFIG_PATH", directory + "/asound.conf", 1)
        return directory
    }()

    /// Makes sure the config is exported, and that alsa-lib can open a `type file` PCM; records
    /// a failure saying how to install ALSA otherwise.
    static func prepare() -> Bool {
        _ = folder
        do {
            _ = try Microphone(pcmName: "nearplaytest").probe()
            return true
        } catch {
            Issue.record("ALSA cannot open the test's file PCM (\(error)). The ALSA runtime (libasound2) is missing or broken: run scripts/bootstrap.")
            return false
        }
    }
}

struct MicrophoneTests {
    @Test func aKnownToneGivesItsRMSAndPeak() async throws {
        guard ALSATestConfig.prepare() else { return }
        let microphone = Microphone(pcmName: "nearplaytest")
        #expect(try microphone.probe() == 16_000)
        var levels: [LevelSample] = []
        for try await level in microphone.levels(frameLimit: 16_000) { levels.append(level) }
        #expect(levels.count == 20)
        for level in levels {
            #expect(abs(level.rmsDBFS - (-9.031)) < 0.01, "RMS \(level.rmsDBFS)")
            #expect(abs(level.peakDBFS - (-6.021)) < 0.01, "peak \(level.peakDBFS)")
            #expect(level.overruns == 0)
        }
        #expect(abs(levels.last!.time - 1.0) < 1e-9)
    }

    @Test func aQuietToneReadsQuiet() async throws {
        guard ALSATestConfig.prepare() else { return }
        var levels: [LevelSample] = []
        for try await level in Microphone(pcmName: "nearplayquiet").levels(frameLimit: 8_000) { levels.append(level) }
        #expect(levels.count == 10)
        #expect(levels.allSatisfy { abs($0.rmsDBFS - (-43.01)) < 0.05 && abs($0.peakDBFS - (-40)) < 0.05 })
    }

    @Test func stopsWhenTheConsumerStops() async throws {
        guard ALSATestConfig.prepare() else { return }
        var received = 0
        for try await _ in Microphone(pcmName: "nearplaytest").levels() {
            received += 1
            if received == 3 { break }
        }
        #expect(received == 3)
    }

    /// `stop()` ends the sequence after the levels already read, without cancelling anybody.
    @Test func stopEndsTheSequenceAfterWhatWasRead() async throws {
        guard ALSATestConfig.prepare() else { return }
        let levels = Microphone(pcmName: "nearplaytest").levels()
        var received = 0
        let started = monotonicSeconds()
        for try await _ in levels {
            received += 1
            if received == 3 { levels.stop() }
        }
        #expect(received >= 3)
        // Generous: a loaded CI machine can be slow; this catches a capture that ignores stop().
        #expect(monotonicSeconds() - started < 30, "the capture thread must notice stop()")
    }

    @Test func aMissingPCMIsAClearError() async throws {
        guard ALSATestConfig.prepare() else { return }
        let error = try #require(throws: SensorError.self) { try Microphone(pcmName: "nosuchpcm").probe() }
        guard case .audioDeviceMissing(let pcm, _) = error else {
            Issue.record("expected a missing device, got \(error)")
            return
        }
        #expect(pcm == "nosuchpcm")
        #expect(error.description.contains("arecord -L"))
    }
}
