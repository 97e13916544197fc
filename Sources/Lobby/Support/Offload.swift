import Dispatch

/// Runs CPU-heavy synchronous work (bcrypt) off the cooperative thread pool, so a slow hash does not
/// hold up other requests' tasks. At utility QoS: the default-QoS queues (I/O sources, GRDB's
/// queues) keep their threads when many hashes are waiting.
func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global(qos: .utility).async { continuation.resume(returning: work()) }
    }
}
