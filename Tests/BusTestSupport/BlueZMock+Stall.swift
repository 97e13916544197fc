import DBus

extension BlueZMock {
    /// What ends a controller's stall: discovery started again, or the adapter switched off.
    public enum StallEnd: String, Sendable {
        case discovery, power
    }

    /// Makes the controller stop delivering advertisements (``receive(_:rssi:manufacturerData:)``
    /// drops them) while discovery still reads as on, until `until` happens.
    public func stall(until: StallEnd, adapter: String = "hci0") async throws {
        _ = try await call("Stall", [.string(adapter), .string(until.rawValue)])
    }

    /// Whether the adapter is stalled now, and how often discovery was started and the adapter
    /// switched off since it was added.
    public func stallState(adapter: String = "hci0") async throws -> (stalled: Bool, discoveryStarts: Int, powerOffs: Int) {
        let reply = try await call("StallState", [.string(adapter)])
        guard reply.count == 3, let until = reply[0].stringValue, case .uint32(let starts) = reply[1], case .uint32(let offs) = reply[2] else {
            return (false, 0, 0)
        }
        return (!until.isEmpty, Int(starts), Int(offs))
    }

    /// The controller receives an advertisement from `device`: reported as bluetoothd would when
    /// the adapter discovers and is not stalled. Returns whether it was reported.
    @discardableResult
    public func receive(_ device: DBusObjectPath, rssi: Int16, manufacturerData: [UInt16: [UInt8]]) async throws -> Bool {
        let data = DBusValue.dictionary(key: "q", value: "v", manufacturerData.sorted { $0.key < $1.key }.map {
            DBusDictionaryEntry(.uint16($0.key), .variant(.bytes($0.value)))
        })
        let reply = try await call("Receive", [.objectPath(device), .int16(rssi), data])
        return reply.first == .boolean(true)
    }
}
