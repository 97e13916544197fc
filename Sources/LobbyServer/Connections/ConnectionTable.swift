import Synchronization

/// Counts open connections per client address, so one address cannot take every descriptor.
final class ConnectionTable: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    let maximumPerAddress: Int
    /// Addresses without a share: the reverse proxies in front of the lobby, which carry every
    /// client's connections (nginx limits each client's connections itself).
    let unlimited: Set<String>

    init(maximumPerAddress: Int, unlimited: Set<String> = []) {
        self.maximumPerAddress = maximumPerAddress
        self.unlimited = unlimited
    }

    /// Counts a connection from `address`, or returns false (counting nothing) when the address
    /// already holds its maximum.
    func open(_ address: String) -> Bool {
        counts.withLock { counts in
            let count = counts[address, default: 0]
            guard count < maximumPerAddress || unlimited.contains(address) else { return false }
            counts[address] = count + 1
            return true
        }
    }

    /// A counted connection from `address` closed.
    func close(_ address: String) {
        counts.withLock { counts in
            let count = counts[address, default: 0] - 1
            counts[address] = count > 0 ? count : nil
        }
    }

    /// Connections `address` holds now.
    func count(_ address: String) -> Int {
        counts.withLock { $0[address, default: 0] }
    }
}
