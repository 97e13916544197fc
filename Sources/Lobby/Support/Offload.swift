import NIOPosix

/// Runs CPU-heavy synchronous work (bcrypt) on NIO's blocking thread pool, off the cooperative
/// thread pool, so a slow hash does not hold up other requests' tasks (nor the event loops).
/// Throws `CancellationError` when the task is cancelled before the work starts: a request that
/// went away does not spend a hash.
func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
    try await NIOThreadPool.singleton.runIfActive(work)
}
