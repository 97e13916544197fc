import DBus

/// One connection to the system bus as a BlueZ client: the BlueZ signals subscribed first, then
/// bluetoothd's objects read, so nothing falls between the two.
struct BlueZSession: Sendable {
    let connection: DBusConnection
    let signals: DBusSignalStream

    /// How long signals may wait in the socket to be read together: bluetoothd sends one
    /// PropertiesChanged per advertisement received, so a busy room means thousands a second.
    /// Reading them every 10 ms keeps the scanner's CPU low (see the README's figures) and is far
    /// below what ranging notices: a beacon advertises every 100 ms or so, and the filters smooth
    /// over seconds. Replies to our own calls are never held.
    static let signalCoalescing = Duration.milliseconds(10)

    /// Connects to the bus at `address`, or the system bus when nil.
    static func open(address: String?) async throws -> BlueZSession {
        let connection = if let address {
            try await DBusConnection.connect(address: address, signalCoalescing: signalCoalescing)
        } else {
            try await DBusConnection.system(signalCoalescing: signalCoalescing)
        }
        do {
            let signals = try await connection.signals(matching: BlueZ.matchRules)
            return BlueZSession(connection: connection, signals: signals)
        } catch {
            connection.close()
            throw error
        }
    }

    /// bluetoothd's objects, or none while the service is not running.
    func loadObjects() async throws -> BlueZObjects {
        guard try await connection.nameOwner(of: BlueZ.service) != nil else { return BlueZObjects() }
        do {
            let reply = try await connection.call(
                destination: BlueZ.service, path: BlueZ.root, interface: BlueZ.objectManagerInterface,
                member: BlueZ.Method.getManagedObjects, timeout: .seconds(10))
            return try BlueZObjects(managedObjects: reply)
        } catch let error as DBusError where error.name == DBusError.serviceUnknownName
            || error.name == DBusError.nameHasNoOwnerName
        {
            return BlueZObjects()
        }
    }

    func call(_ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue] = [],
              timeout: Duration = .seconds(10)) async throws {
        _ = try await connection.call(destination: BlueZ.service, path: path, interface: interface,
                                      member: member, body: body, timeout: timeout)
    }

    func close() {
        connection.close()
    }
}

/// Lists the adapters bluetoothd knows, with their advertising capacity.
public enum BlueZAdapters {
    /// `busAddress`: the bus bluetoothd is on; nil for the system bus.
    /// Throws ``RadioError`` only.
    public static func list(busAddress: String? = nil) async throws -> [BlueZAdapter] {
        do {
            let session = try await BlueZSession.open(address: busAddress)
            defer { session.close() }
            guard try await session.connection.nameOwner(of: BlueZ.service) != nil else {
                throw RadioError(.adapterUnusable,
                                 "The Bluetooth service (bluetoothd) is not running: start it with `sudo systemctl start bluetooth`.")
            }
            return try await session.loadObjects().adapters.sorted { $0.path < $1.path }
        } catch {
            throw RadioError.wrapping(error, busAddress: busAddress)
        }
    }
}
