/// Work an actor starts on the side (a lookup, a retry, a report), run as child tasks of the
/// actor's own ``run()``: when the service running it stops, the work still under way is
/// cancelled and awaited, and none of it outlives the agent.
///
/// Work handed to ``spawn(_:)`` before ``run()`` starts waits for it; work handed over after
/// ``run()`` ended is dropped.
final class ChildTasks: Sendable {
    private let work: AsyncStream<@Sendable () async -> Void>
    private let continuation: AsyncStream<@Sendable () async -> Void>.Continuation

    init() {
        (work, continuation) = AsyncStream.makeStream()
    }

    /// Runs `body` as a child of ``run()``.
    func spawn(_ body: @escaping @Sendable () async -> Void) {
        continuation.yield(body)
    }

    /// Runs what is spawned until the task is cancelled, then cancels and awaits what still runs.
    /// Call it once.
    func run() async {
        await withDiscardingTaskGroup { group in
            // The stream ends when this task is cancelled, and the group's children with it.
            for await body in work {
                group.addTask { await body() }
            }
        }
        continuation.finish()
    }
}
