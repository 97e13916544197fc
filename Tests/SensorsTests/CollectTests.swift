import Synchronization
import Testing
@testable import Sensors

/// ``SensorStream/collect(for:idleLimit:time:)``: a measurement of so many seconds that a
/// stalled sensor or an interrupt cannot hang, and that leaves the sensor stopped.
struct CollectTests {
    /// Set by a producer's loop when it has returned, its cleanup done.
    final class CleanedUp: Sendable {
        private let flag = Atomic<Bool>(false)
        func set() { flag.store(true, ordering: .relaxed) }
        var isSet: Bool { flag.load(ordering: .relaxed) }
    }

    /// A sensor that delivers `first` at once, then one sample every `every` seconds (never,
    /// when nil) until it is stopped.
    static func sensor(first: [Double], every: Double? = nil, cleanedUp: CleanedUp) -> SensorStream<Double> {
        BlockingProducer.stream(name: "nearplay.test.collect") { stop, emit in
            defer { cleanedUp.set() }
            emit(first)
            var time = first.last ?? 0
            while !stop.isRequested {
                guard let every else { _ = stop.sleep(seconds: 0.01); continue }
                guard stop.sleep(seconds: every) else { return }
                time += every
                emit([time])
            }
        }
    }

    /// The elements within `seconds` of the first one, whenever the first one came.
    @Test func keepsTheElementsWithinTheSecondsFromTheFirst() async throws {
        let cleanedUp = CleanedUp()
        let times = (0..<100).map { 5 + Double($0) / 100 }
        let collected = try await Self.sensor(first: times, cleanedUp: cleanedUp).collect(for: 0.5) { $0 }
        #expect(collected == Array(times.prefix(51)))
        #expect(cleanedUp.isSet, "the sensor must be stopped and cleaned up when collect returns")
    }

    /// A sensor that goes quiet ends the measurement after the idle limit with what it gave.
    @Test func givesUpOnASensorThatStalls() async throws {
        let cleanedUp = CleanedUp()
        let clock = ContinuousClock()
        let start = clock.now
        // A window of ten minutes, so that ending well within it (even on a machine busy with every
        // other suite, where this took 35 s once) can only be the idle limit's doing.
        let collected = try await Self.sensor(first: [0, 0.01, 0.02], cleanedUp: cleanedUp)
            .collect(for: 600, idleLimit: .milliseconds(200)) { $0 }
        #expect(collected == [0, 0.01, 0.02])
        #expect(clock.now - start < .seconds(300))
        #expect(cleanedUp.isSet)
    }

    /// A sensor that delivers slowly but steadily is never cut short by the idle limit.
    @Test func theIdleLimitIsNotATotalLimit() async throws {
        let cleanedUp = CleanedUp()
        let collected = try await Self.sensor(first: [0], every: 0.05, cleanedUp: cleanedUp)
            .collect(for: 2, idleLimit: .milliseconds(500)) { $0 }
        #expect(collected.count >= 40 && collected.last! <= 2 + 1e-9, "\(collected)")
        #expect(cleanedUp.isSet)
    }

    /// Cancelling the caller (Ctrl-C in `calibrate sensors`) stops the sensor, then throws.
    @Test func cancellingTheCallerStopsTheSensorAndThrows() async throws {
        let cleanedUp = CleanedUp()
        let stream = Self.sensor(first: [0], every: 0.01, cleanedUp: cleanedUp)
        let measurement = Task { try await stream.collect(for: 600, idleLimit: .seconds(60)) { $0 } }
        try await Task.sleep(for: .milliseconds(100))
        measurement.cancel()
        await #expect(throws: CancellationError.self) { try await measurement.value }
        #expect(cleanedUp.isSet)
    }
}
