import Glibc

/// Reuses one `String` for text that keeps arriving: the object paths, interface, member and
/// property names of a signal stream repeat with every message, and a shared string costs a
/// retain where a new one costs an allocation (freed again on another thread).
///
/// Strings of up to 15 bytes are stored inline by Swift and never allocate, so only longer ones
/// are kept. The table holds at most `capacity` strings and starts over when full, so a stream
/// of ever-new names cannot grow it. One owner, not thread-safe.
struct StringInterner {
    private var table: [UInt64: String] = [:]
    private let capacity: Int
    private(set) var hits = 0

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// The string for the NUL-terminated UTF-8 text at `pointer` (invalid UTF-8 is repaired,
    /// as `String(cString:)` does).
    mutating func string(_ pointer: UnsafePointer<CChar>) -> String {
        let length = strlen(pointer)
        guard length > 15 else { return String(cString: pointer) }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
        // FNV-1a: cheap, and collisions only cost a comparison and a miss.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        if let known = table[hash], Self.equal(known, bytes) {
            hits += 1
            return known
        }
        let text = String(cString: pointer)
        if table.count >= capacity { table.removeAll(keepingCapacity: true) }
        table[hash] = text
        return text
    }

    private static func equal(_ text: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.count == bytes.count && memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        }
    }
}
