/// The btsnoop capture format (RFC 1761 style, version 1), as written by `btmon -w` and
/// Android's HCI snoop log: a 16-byte header, then records of HCI packets with timestamps.
public enum BTSnoop {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    /// Microseconds from 0000-01-01 (the btsnoop epoch) to 1970-01-01.
    public static let unixEpochOffsetMicroseconds: Int64 = 0x00E0_3AB4_4A67_6000

    /// How packets are framed in the file.
    public enum Datalink: UInt32, Sendable {
        /// H1: no packet-type byte; the record flags say command/event and direction.
        case h1 = 1001
        /// H4 (UART): every packet starts with its packet-type byte (Android's snoop log).
        case h4 = 1002
        /// BlueZ's monitor format, what `btmon -w` writes: the flags hold the controller index
        /// (high 16 bits) and an opcode (low 16 bits; 3 is an HCI event, without an H4 byte).
        case monitor = 2001
    }

    /// The monitor format's opcode for a received HCI event.
    public static let monitorEventOpcode: UInt32 = 3

    public struct Record: Sendable, Hashable {
        public var originalLength: UInt32
        /// Bit 0: 0 sent, 1 received. Bit 1: 0 data, 1 command or event.
        public var flags: UInt32
        public var cumulativeDrops: UInt32
        /// Microseconds since 0000-01-01.
        public var timestamp: Int64
        public var data: [UInt8]
        /// Offset of the record header in the file.
        public var fileOffset: Int

        public init(flags: UInt32, timestamp: Int64, data: [UInt8], originalLength: UInt32? = nil,
                    cumulativeDrops: UInt32 = 0, fileOffset: Int = 0) {
            self.originalLength = originalLength ?? UInt32(data.count)
            self.flags = flags
            self.cumulativeDrops = cumulativeDrops
            self.timestamp = timestamp
            self.data = data
            self.fileOffset = fileOffset
        }

        public var isReceived: Bool { flags & 1 != 0 }
        public var isCommandOrEvent: Bool { flags & 2 != 0 }
        /// Seconds since 1970-01-01. (Computed in floating point: a timestamp from the file may be
        /// anything, and must not overflow.)
        public var unixTime: Double { (Double(timestamp) - Double(BTSnoop.unixEpochOffsetMicroseconds)) / 1_000_000 }

        /// The controller index of a monitor-format record.
        public var controllerIndex: UInt16 { UInt16(truncatingIfNeeded: flags >> 16) }

        /// The HCI event packet (from the event code on) when this record holds one.
        public func hciEvent(datalink: Datalink) -> [UInt8]? {
            switch datalink {
            case .h1:
                return isCommandOrEvent && isReceived ? data : nil
            case .h4:
                guard data.first == HCIEvent.h4EventPacketType else { return nil }
                return Array(data.dropFirst())
            case .monitor:
                return flags & 0xFFFF == BTSnoop.monitorEventOpcode ? data : nil
            }
        }
    }

    /// A parsed capture: its datalink, the records that are intact, and what was wrong with the
    /// rest (a truncated last record is reported with its offset, not thrown).
    public struct File: Sendable {
        public var datalink: Datalink
        public var records: [Record]
        public var problems: [FrameError]
    }

    /// True when `bytes` start with the btsnoop magic.
    public static func isBTSnoop(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count >= 8 && Array(bytes.prefix(8)) == magic
    }

    public static func parse(_ bytes: [UInt8]) throws(FrameError) -> File {
        var reader = ByteReader(bytes)
        let head = try reader.read(8, "btsnoop magic")
        guard head == magic else {
            throw .unexpectedValue(what: "btsnoop magic", offset: 0, expected: "\"btsnoop\\0\"", found: Hex.encode(head))
        }
        let version = try reader.uint32BE("btsnoop version")
        guard version == 1 else {
            throw .unexpectedValue(what: "btsnoop version", offset: 8, expected: "1", found: "\(version)")
        }
        let link = try reader.uint32BE("btsnoop datalink")
        guard let datalink = Datalink(rawValue: link) else {
            throw .unexpectedValue(what: "btsnoop datalink", offset: 12, expected: "1001 (H1), 1002 (H4) or 2001 (BlueZ monitor)", found: "\(link)")
        }
        var records: [Record] = []
        var problems: [FrameError] = []
        while !reader.isAtEnd {
            let recordOffset = reader.absoluteOffset
            do throws(FrameError) {
                let original = try reader.uint32BE("record original length")
                let included = Int(try reader.uint32BE("record included length"))
                let flags = try reader.uint32BE("record flags")
                let drops = try reader.uint32BE("record cumulative drops")
                let timestamp = Int64(bitPattern: try reader.uint64BE("record timestamp"))
                let data = try reader.read(included, "record data")
                records.append(Record(flags: flags, timestamp: timestamp, data: data, originalLength: original,
                                      cumulativeDrops: drops, fileOffset: recordOffset))
            } catch {
                problems.append(error)
                break
            }
        }
        return File(datalink: datalink, records: records, problems: problems)
    }

    /// The 16-byte file header.
    public static func header(datalink: Datalink) -> [UInt8] {
        magic + be32(1) + be32(datalink.rawValue)
    }

    /// One record, ready to append after the header.
    public static func encode(_ record: Record) -> [UInt8] {
        be32(record.originalLength) + be32(UInt32(record.data.count)) + be32(record.flags) + be32(record.cumulativeDrops)
            + (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(bitPattern: record.timestamp) >> ($0 * 8)) }
            + record.data
    }

    private static func be32(_ v: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
}
