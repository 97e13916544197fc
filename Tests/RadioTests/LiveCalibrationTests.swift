import BeaconFrames
import Proximity
import Radio
import Ranging
import Synchronization
import Testing

/// `calibrate ranging --live` without the terminal: a beacon held at known distances in turn.
struct LiveCalibrationTests {
    /// A scanner whose n-th scan hears the n-th batch, then ends (its source exhausted) or, when
    /// `holds`, keeps listening until cancelled, as a radio does.
    final class Batches: AdvertisementScanner, Sendable {
        let batches: [[Advertisement]]
        let holds: Bool
        let calls = Atomic<Int>(0)

        init(_ batches: [[Advertisement]], holds: Bool = false) {
            self.batches = batches
            self.holds = holds
        }

        func scan(_ receive: (Advertisement) async -> Void) async throws {
            let call = calls.add(1, ordering: .relaxed).oldValue
            for advertisement in batches[call] { await receive(advertisement) }
            guard holds else { return }
            do { try await Task.sleep(for: .seconds(3600)) } catch { return }
        }
    }

    static let held = Beacons.first
    static let other = Beacons.second
    static let address = BluetoothAddress(Beacons.firstAddress)!

    static func heard(_ beacon: IBeacon, _ rssi: Int?) -> Advertisement {
        Advertisement(time: 0, address: address, rssi: rssi, data: beacon.advertisingData())
    }

    /// At 1 m the held beacon is the loudest; at 3 m the other one is louder, and left out.
    /// Readings without RSSI, with an implausible one, or without a frame are not readings.
    static let twoDistances: [[Advertisement]] = [
        [heard(held, -59), heard(held, -60), heard(held, -58), heard(other, -80), heard(other, -81),
         heard(held, nil), heard(held, 0), Advertisement(time: 0, address: address, rssi: -40, data: [0x02, 0x01, 0x06])],
        [heard(held, -72), heard(held, -73), heard(other, -70)],
    ]

    @Test func calibratesWithTheBeaconHeardLoudestAtTheFirstDistance() async throws {
        var said: [String] = []
        let session = LiveCalibration(scanner: Batches(Self.twoDistances), listening: .seconds(30))
        let readings = try await session.readings(at: [1, 3], ready: { said.append("ready \($0)") }, progress: { said.append("\($0)") })
        #expect(readings.map { "\($0.distance) \($0.rssi) \($0.measuredPower)" }
            == ["1.0 -59 -59", "1.0 -60 -59", "1.0 -58 -59", "3.0 -72 -59", "3.0 -73 -59"])
        #expect(said == [
            "ready 1.0", "\(LiveCalibrationProgress.listening(distance: 1))",
            "\(LiveCalibrationProgress.chose(Self.held.identity))",
            "\(LiveCalibrationProgress.heard(distance: 1, readings: 3, medianRSSI: -59))",
            "ready 3.0", "\(LiveCalibrationProgress.listening(distance: 3))",
            "\(LiveCalibrationProgress.heard(distance: 3, readings: 2, medianRSSI: -72.5))",
        ])
        let profile = try Calibration.siteProfile(readings: readings)
        #expect(profile.distances == [1, 3] && profile.readings == 5)
    }

    @Test func aNamedBeaconIsCalibratedWithEvenWhenAnotherIsLouder() async throws {
        var chose: [BeaconIdentity] = []
        let session = LiveCalibration(scanner: Batches(Self.twoDistances), listening: .seconds(30))
        let readings = try await session.readings(at: [1, 3], of: Self.other.identity, ready: { _ in }, progress: {
            if case .chose(let identity) = $0 { chose.append(identity) }
        })
        #expect(readings.map(\.rssi) == [-80, -81, -70])
        #expect(chose.isEmpty)
    }

    /// A radio that goes on scanning is listened to for the session's time, then stopped.
    @Test func listensForItsTimeToARadioThatKeepsScanning() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let session = LiveCalibration(scanner: Batches(Self.twoDistances, holds: true), listening: .milliseconds(200))
        let readings = try await session.readings(at: [1, 3], ready: { _ in })
        #expect(readings.count == 5)
        #expect(clock.now - start >= .milliseconds(400))
    }

    @Test func saysWhatItDidNotHearAndWhere() async throws {
        let lost = LiveCalibration(scanner: Batches([Self.twoDistances[0], [Self.heard(Self.other, -70)]]), listening: .seconds(30))
        await #expect(throws: LiveCalibrationError.nothingHeard(beacon: Self.held.identity, distance: 3, seconds: 30)) {
            _ = try await lost.readings(at: [1, 3], ready: { _ in })
        }
        let silent = LiveCalibration(scanner: Batches([[]]), listening: .milliseconds(1500))
        do {
            _ = try await silent.readings(at: [0.5, 3], ready: { _ in })
            Issue.record("a silent radio gave readings")
        } catch let error as LiveCalibrationError {
            #expect(error == .nothingHeard(beacon: nil, distance: 0.5, seconds: 1.5))
            #expect(error.description == "heard no readings of any beacon that sends its measured power in 1.5 s at 0.5 m: check that it advertises and that the radio scans")
        }
    }

    /// What `ready` throws (standard input ended) ends the session before it listens.
    @Test func whatReadyThrowsEndsTheSession() async throws {
        struct NoOneThere: Error {}
        let scanner = Batches(Self.twoDistances)
        await #expect(throws: NoOneThere.self) {
            _ = try await LiveCalibration(scanner: scanner, listening: .seconds(30)).readings(at: [1, 3], ready: { _ in throw NoOneThere() })
        }
        #expect(scanner.calls.load(ordering: .relaxed) == 0)
    }
}
