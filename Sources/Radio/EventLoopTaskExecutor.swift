import NIOCore
import Synchronization

/// Runs a task's jobs on one NIO event loop, so a service's reading and writing (the agent's
/// local API, the simulated air's hub) never waits for a thread of Swift's task pool, and its
/// writes to channels of that loop need no hop to another thread. One executor per loop, kept
/// for the process's life (a task that prefers an executor does not keep it alive).
public final class EventLoopTaskExecutor: TaskExecutor {
    private static let executors = Mutex<[ObjectIdentifier: EventLoopTaskExecutor]>([:])
    public let eventLoop: any EventLoop

    private init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    public static func of(_ eventLoop: any EventLoop) -> EventLoopTaskExecutor {
        executors.withLock { executors in
            if let executor = executors[ObjectIdentifier(eventLoop)] { return executor }
            let executor = EventLoopTaskExecutor(eventLoop)
            executors[ObjectIdentifier(eventLoop)] = executor
            return executor
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
