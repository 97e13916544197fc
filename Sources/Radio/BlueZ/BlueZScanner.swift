import BeaconFrames
import DBus
import Logging

/// Scans through bluetoothd's D-Bus API: the default ``Scanner`` on Linux.
///
/// It asks for LE discovery with duplicate data and an RSSI threshold (without an RSSI or
/// pathloss filter BlueZ hides RSSI changes under 8 dB and pauses between discovery rounds), turns
/// each Device1 update into an ``Advertisement``, and keeps going through bluetoothd restarts,
/// adapters coming and going or switched off, and a lost bus connection.
public struct BlueZScanner: Scanner {
    /// `hci0` and so on; nil takes the first powered adapter.
    public var adapterName: String?
    /// Advertisements weaker than this (dBm) are not reported. BlueZ merges the filters of all
    /// its clients, so every update is checked against ours again.
    public var rssiThreshold: Int
    public var logger: Logger
    /// The bus bluetoothd is on; nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the default).
    public var busAddress: String?

    public init(adapterName: String? = nil, rssiThreshold: Int = -110, busAddress: String? = nil,
                logger: Logger = Logger(label: "nearplay.radio.bluez")) {
        self.adapterName = adapterName
        self.busAddress = busAddress
        self.rssiThreshold = max(-127, min(20, rssiThreshold))
        self.logger = logger
    }

    public func scan(_ receive: (Advertisement) async -> Void) async throws {
        let start = ContinuousClock.now
        var backoff = Backoff()
        while !Task.isCancelled {
            do {
                let session = try await BlueZSession.open(address: busAddress)
                backoff.reset()
                var run = ScanRun(scanner: self, session: session, start: start)
                try await run.serve(receive)
            } catch is CancellationError {
                return
            } catch let error as RadioError {
                throw error
            } catch {
                if Task.isCancelled { return }
                logger.warning("Lost the system bus (\(error)); reconnecting in \(backoff.delay).")
            }
            do { try await backoff.wait() } catch { return }
        }
    }
}

/// One bus connection's worth of scanning.
private struct ScanRun {
    let scanner: BlueZScanner
    let session: BlueZSession
    let start: ContinuousClock.Instant
    var objects = BlueZObjects()
    /// Decoded devices, kept up to date from PropertiesChanged so an update costs only what
    /// changed (the hot path: one signal per advertisement received).
    var devices: [DBusObjectPath: BlueZDevice] = [:]
    /// The adapter we started discovery on, while it runs.
    var discoveringOn: DBusObjectPath?
    /// The last state reported to the user, so each is said once.
    var lastNotice = ""

    var logger: Logger { scanner.logger }

    init(scanner: BlueZScanner, session: BlueZSession, start: ContinuousClock.Instant) {
        self.scanner = scanner
        self.session = session
        self.start = start
    }

    /// Runs until the connection drops (throws) or the task is cancelled (stops discovery, returns).
    mutating func serve(_ receive: (Advertisement) async -> Void) async throws {
        defer { session.close() }
        objects = try await session.loadObjects()
        for advertisement in try await reconcile() { await receive(advertisement) }
        do {
            for try await signal in session.signals {
                for advertisement in try await handle(signal) { await receive(advertisement) }
            }
        } catch let error as DBusError where !Task.isCancelled {
            throw error
        } catch {}
        if Task.isCancelled {
            await stopDiscovery()
            return
        }
        throw DBusError.disconnected("the bus connection closed")
    }

    /// Applies one signal; returns the advertisements it brought.
    private mutating func handle(_ signal: DBusMessage) async throws -> [Advertisement] {
        let change = objects.apply(signal)
        switch change {
        case .ownerChanged(let owner):
            discoveringOn = nil
            devices.removeAll()
            if owner == nil {
                notice("The Bluetooth service (bluetoothd) stopped; waiting for it to come back.")
                return []
            }
            objects = try await session.loadObjects()
            devices.removeAll()
            return try await reconcile()
        case .interfacesAdded(let path, let interfaces):
            devices[path] = nil
            if interfaces.contains(BlueZ.deviceInterface) {
                return advertisement(from: path).map { [$0] } ?? []
            }
            if interfaces.contains(BlueZ.adapterInterface) { return try await reconcile() }
            return []
        case .interfacesRemoved(let path, let interfaces):
            devices = devices.filter { !$0.key.isDescendant(of: path) }
            guard interfaces.contains(BlueZ.adapterInterface) else { return [] }
            if path == discoveringOn {
                discoveringOn = nil
                logger.notice("Bluetooth adapter \(path.lastElement) was removed.")
            }
            return try await reconcile()
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            if interface == BlueZ.deviceInterface {
                if devices[path] != nil {
                    devices[path]!.update(changed)
                    if !invalidated.isEmpty { devices[path]!.invalidate(invalidated) }
                }
                guard changed.contains(where: { BlueZDevice.advertisementProperties.contains($0.0) }) else { return [] }
                return advertisement(from: path).map { [$0] } ?? []
            }
            let adapterNames = [BlueZ.Property.powered, BlueZ.Property.discovering]
            if interface == BlueZ.adapterInterface,
               adapterNames.contains(where: { changed[$0] != nil || invalidated.contains($0) })
            {
                return try await adapterChanged(path)
            }
            return []
        case .irrelevant:
            return []
        }
    }

    private mutating func adapterChanged(_ path: DBusObjectPath) async throws -> [Advertisement] {
        guard let adapter = objects.adapter(at: path) else { return [] }
        if path == discoveringOn {
            if !adapter.powered {
                discoveringOn = nil
            } else if !adapter.discovering {
                // Another client or the kernel stopped discovery under us: ask again.
                logger.info("Discovery on \(adapter.name) stopped; restarting it.")
                discoveringOn = nil
            }
        }
        return try await reconcile()
    }

    /// Brings discovery to where it should be: running on the chosen adapter when it is powered.
    /// Returns the advertisements of devices already known when discovery starts.
    private mutating func reconcile() async throws -> [Advertisement] {
        guard discoveringOn == nil else { return [] }
        guard let adapter = BlueZAdapter.choose(from: objects.adapters, named: scanner.adapterName) else {
            if let name = scanner.adapterName {
                notice("Bluetooth adapter \(name) not found; waiting for it (see `nearplay adapters`).")
            } else {
                notice("No Bluetooth adapter found; waiting for one to appear.")
            }
            return []
        }
        guard adapter.powered else {
            notice("Bluetooth adapter \(adapter.name) is powered off: run `bluetoothctl power on`. Waiting for it.")
            return []
        }
        do {
            try await session.call(adapter.path, BlueZ.adapterInterface, BlueZ.Method.setDiscoveryFilter, [
                .stringVariantDictionary([
                    (BlueZ.Filter.transport, .string("le")),
                    (BlueZ.Filter.duplicateData, .boolean(true)),
                    (BlueZ.Filter.rssi, .int16(Int16(scanner.rssiThreshold))),
                ]),
            ])
            do {
                try await session.call(adapter.path, BlueZ.adapterInterface, BlueZ.Method.startDiscovery)
            } catch let error as DBusError where error.name == BlueZ.Error.inProgress {
                // Already discovering for us (a repeated request); nothing to do.
            }
        } catch let error as DBusError {
            if error.name == BlueZ.Error.accessDenied {
                throw RadioError.accessDenied("scan with Bluetooth adapter \(adapter.name)", cause: error)
            }
            if error.isDisconnection { throw error }
            // NotReady (being powered off), Failed (controller busy): wait for the next change.
            notice("Bluetooth adapter \(adapter.name) refused to start discovery (\(error)); waiting for it to change.")
            return []
        }
        discoveringOn = adapter.path
        notice("Scanning with Bluetooth adapter \(adapter.name) (\(adapter.address)).")
        return objects.devices(on: adapter.path).compactMap { device in advertisement(from: device.path) }
    }

    /// The advertisement a device's current properties describe, when it is on our adapter and
    /// passes our own filter.
    private mutating func advertisement(from path: DBusObjectPath) -> Advertisement? {
        if devices[path] == nil { devices[path] = objects.device(at: path) }
        guard let discoveringOn, let device = devices[path],
              device.adapter == discoveringOn || path.isDescendant(of: discoveringOn),
              let address = device.address, let rssi = device.rssi, rssi >= scanner.rssiThreshold
        else { return nil }
        if !device.problems.isEmpty {
            logger.debug("Device \(address): \(device.problems.joined(separator: "; "))")
            devices[path]?.problems.removeAll()
        }
        return Advertisement(time: start.duration(to: .now).inSeconds, address: address, addressType: device.addressType,
                             rssi: rssi, data: devices[path]!.advertisingData)
    }

    private func stopDiscovery() async {
        guard let adapter = discoveringOn else { return }
        let session = self.session
        // Run outside the cancelled task so the call is actually made.
        await Task {
            try? await session.call(adapter, BlueZ.adapterInterface, BlueZ.Method.stopDiscovery, timeout: .seconds(2))
        }.value
    }

    private mutating func notice(_ text: String) {
        guard text != lastNotice else { return }
        lastNotice = text
        logger.notice("\(text)")
    }
}
