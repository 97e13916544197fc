import Synchronization

/// A receiver's name (one radio among several in a trace), interned as a small number so the
/// per-advertisement values (``Advertisement``, ``Sighting``, events) stay plain values that copy
/// without reference counting.
public struct Receiver: Sendable, Hashable, CustomStringConvertible {
    public let id: UInt32

    /// The receiver with this name; the same name always gives the same receiver.
    public init(_ name: String) { id = ReceiverNames.shared.id(for: name) }

    public var name: String { ReceiverNames.shared.name(of: id) }
    public var description: String { name }
}

/// Every receiver name seen by this process. Receivers are few (one per radio), so the table
/// only grows by a handful of entries.
final class ReceiverNames: Sendable {
    static let shared = ReceiverNames()

    private let table = Mutex<(ids: [String: UInt32], names: [String])>(([:], []))

    func id(for name: String) -> UInt32 {
        table.withLock { table in
            if let id = table.ids[name] { return id }
            let id = UInt32(table.names.count)
            table.names.append(name)
            table.ids[name] = id
            return id
        }
    }

    func name(of id: UInt32) -> String {
        table.withLock { Int(id) < $0.names.count ? $0.names[Int(id)] : "receiver \(id)" }
    }
}
