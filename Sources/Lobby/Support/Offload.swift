import Dispatch

/// Runs CPU-heavy synchronous work (bcrypt) off the cooperative thread pool, so a slow hash does not
/// hold up other requests' tasks.
func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}
