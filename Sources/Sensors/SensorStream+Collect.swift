import Synchronization

extension SensorStream {
    /// The elements whose time, counted from the first element's, is within `seconds`; for a
    /// measurement such as `nearplay calibrate sensors`.
    ///
    /// It gives up when `idleLimit` passes with nothing delivered, returning what it has, so a
    /// sensor that stalls cannot hang the caller; an idle limit, not a total one, so a busy
    /// machine reading a file is never cut short. It stops the sensor and waits for its thread to
    /// clean up before returning. Cancelling the calling task ends the measurement the same way
    /// and then throws `CancellationError`, so a caller can tell an interrupted measurement from
    /// a short one.
    public func collect(for seconds: Double, idleLimit: Duration = .seconds(2),
                        time: @escaping @Sendable (Element) -> Double) async throws -> [Element] {
        let delivered = DeliveredCount()
        let outcome: Result<[Element], any Error>
        do {
            outcome = .success(try await withThrowingTaskGroup(of: [Element]?.self) { group in
                group.addTask {
                    var elements: [Element] = []
                    var first: Double?
                    // A cancelled iteration ends the sequence: what was read so far is kept.
                    for try await element in self {
                        delivered.increment()
                        let start = first ?? time(element)
                        first = start
                        if time(element) - start > seconds { break }
                        elements.append(element)
                    }
                    return elements
                }
                group.addTask {
                    var seen = -1
                    while delivered.value != seen {
                        seen = delivered.value
                        do {
                            try await Task.sleep(for: idleLimit)
                        } catch {
                            return nil // The collection ended first.
                        }
                    }
                    return nil
                }
                var collected: [Element] = []
                // Whichever ends first (the collection, or the idle limit) ends the other.
                while let result = try await group.next() {
                    group.cancelAll()
                    if let result { collected = result }
                }
                return collected
            })
        } catch {
            outcome = .failure(error)
        }
        await stopAndWait()
        try Task.checkCancellation()
        return try outcome.get()
    }
}

/// How many elements a collection has taken, for its idle limit.
private final class DeliveredCount: Sendable {
    private let count = Atomic<Int>(0)

    func increment() { count.add(1, ordering: .relaxed) }

    var value: Int { count.load(ordering: .relaxed) }
}
