import BeaconFrames
import DBus
import Logging

/// Scans through bluetoothd's D-Bus API: the default ``AdvertisementScanner`` on Linux.
///
/// It asks for LE discovery with duplicate data and an RSSI threshold (without an RSSI or
/// pathloss filter BlueZ hides RSSI changes under 8 dB and pauses between discovery rounds), turns
/// each Device1 update into an ``Advertisement``, and keeps going through bluetoothd restarts,
/// adapters coming and going or switched off, and a lost bus connection.
public struct BlueZScanner: AdvertisementScanner {
    /// The BlueZ connection this scanner uses, perhaps shared with an advertiser.
    public let manager: BlueZManager
    /// `hci0` and so on; nil takes the first powered adapter.
    public var adapterName: String?
    /// Advertisements weaker than this (dBm) are not reported. BlueZ merges the filters of all
    /// its clients, so every update is checked against ours again.
    public var rssiThreshold: Int
    public var logger: Logger
    /// When silence is implausible enough to restart discovery, then cycle the adapter's power
    /// (``ScanStallDetector``); nil turns the watch off.
    public var stallDetection: ScanStallDetector.Configuration? = .init()
    /// How often the stall watch looks at the silence.
    public var stallCheckInterval: Duration = .seconds(1)
    /// Discovery restarts and power cycles done so far, shared by every scan of this scanner.
    public let recoveries = ScanRecoveries()
    /// The bus bluetoothd is on; nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` or the default).
    public var busAddress: String? { manager.busAddress }

    /// A scanner on `manager`'s connection, which it shares with whatever else uses the manager.
    public init(manager: BlueZManager, adapterName: String? = nil, rssiThreshold: Int = -110,
                logger: Logger? = nil) {
        self.manager = manager
        self.adapterName = adapterName
        self.rssiThreshold = max(-127, min(20, rssiThreshold))
        self.logger = logger ?? manager.logger
    }

    /// A scanner with a connection of its own (a ``BlueZManager`` nothing else uses).
    public init(adapterName: String? = nil, rssiThreshold: Int = -110, busAddress: String? = nil,
                logger: Logger = Logger(label: "nearplay.radio.bluez")) {
        self.init(manager: BlueZManager(busAddress: busAddress, logger: logger), adapterName: adapterName,
                  rssiThreshold: rssiThreshold, logger: logger)
    }

    public func scan(_ receive: (Advertisement) async -> Void) async throws {
        let user = await manager.subscribe(followingDevices: true)
        var run = ScanRun(scanner: self, start: .now)
        let watch = stallDetection.map { configuration in
            let watch = BlueZStallWatch(activity: ScanActivity(configuration), recoveries: recoveries,
                                        checkInterval: stallCheckInterval, powerOffTime: .seconds(1), logger: logger)
            run.activity = watch.activity
            return watch
        }
        var failure: (any Error)?
        await withDiscardingTaskGroup { group in
            // The stall watch is a child of the scan: it ends with it.
            if let watch { group.addTask { await watch.run() } }
            do {
                try await run.serve(user, receive)
            } catch where Task.isCancelled {
                // A call cut short by the cancellation: winding down, not a failure.
            } catch {
                failure = error
            }
            group.cancelAll()
        }
        await run.stopDiscovery()
        await manager.unsubscribe(user)
        if let failure { throw RadioError.wrapping(failure, busAddress: manager.busAddress) }
    }
}

/// One scan's state, kept across the manager's reconnections.
private struct ScanRun {
    let scanner: BlueZScanner
    let start: ContinuousClock.Instant
    /// The connection to make calls on, while there is one.
    var session: BlueZSession?
    /// Decoded devices, kept up to date from PropertiesChanged so an update costs only what
    /// changed (the hot path: one signal per advertisement received).
    var devices: [DBusObjectPath: BlueZDevice] = [:]
    /// The last state reported to the user, so each is said once.
    var lastNotice = ""
    /// Where the stall watch hears of advertisements and discovery, when it runs.
    var activity: ScanActivity?
    /// The adapter discovery runs on, while it does (the stall watch acts on it).
    var discoveringOn: DBusObjectPath? {
        didSet { if discoveringOn != oldValue { activity?.discovering(session, on: discoveringOn, name: discoveringOn?.lastElement ?? "") } }
    }

    var logger: Logger { scanner.logger }
    var manager: BlueZManager { scanner.manager }

    init(scanner: BlueZScanner, start: ContinuousClock.Instant) {
        self.scanner = scanner
        self.start = start
    }

    /// Runs until the task is cancelled or something waiting cannot fix (throws either way).
    /// This task reads the bus itself whenever no other user of the manager is reading it, so
    /// on the hot path the bus wakes it directly.
    mutating func serve(_ user: UInt64, _ receive: (Advertisement) async -> Void) async throws {
        while true {
            for event in try await manager.events(for: user) {
                try await follow(event, receive)
            }
        }
    }

    private mutating func follow(_ event: BlueZManager.Event, _ receive: (Advertisement) async -> Void) async throws {
        switch event {
        case .ready(let session, let objects):
            self.session = session
            discoveringOn = nil
            devices.removeAll()
            for advertisement in try await reconcile(as: objects) { await receive(advertisement) }
        case .serviceStopped:
            discoveringOn = nil
            devices.removeAll()
            notice("The Bluetooth service (bluetoothd) stopped; waiting for it to come back.")
        case .disconnected:
            session = nil
            discoveringOn = nil
            devices.removeAll()
        case .changes(let changes):
            for change in changes {
                for advertisement in try await handle(change) { await receive(advertisement) }
            }
        }
    }

    /// Follows one change the manager applied; returns the advertisements it brought.
    private mutating func handle(_ change: BlueZObjects.Change) async throws -> [Advertisement] {
        switch change {
        case .ownerChanged:
            // The manager turns these into `serviceStopped` and `ready`.
            return []
        case .interfacesAdded(let path, let interfaces, let properties):
            // As the signal has it: the manager's copy may already hold later changes, which
            // follow as changes of their own.
            devices[path] = properties[BlueZ.deviceInterface].map { BlueZDevice(path: path, properties: $0) }
            if interfaces.contains(BlueZ.deviceInterface) {
                return await advertisement(from: path).map { [$0] } ?? []
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
                return await advertisement(from: path).map { [$0] } ?? []
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
        guard let adapter = await manager.adapter(at: path) else { return [] }
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
    /// Returns the advertisements of devices already known when discovery starts. `objects`: the
    /// objects as of this point of the change stream, when known (the manager's own copy may be
    /// further on, and the changes in between would then be reported twice).
    private mutating func reconcile(as objects: BlueZObjects? = nil) async throws -> [Advertisement] {
        guard discoveringOn == nil, let session else { return [] }
        let chosen = if let objects {
            BlueZAdapter.choose(from: objects.adapters, named: scanner.adapterName)
        } else {
            await manager.chooseAdapter(named: scanner.adapterName)
        }
        guard let adapter = chosen else {
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
            } catch let error as DBusError where error.name == BlueZ.ErrorName.inProgress {
                // Already discovering for us (a repeated request); nothing to do.
            }
        } catch let error as DBusError {
            if error.name == BlueZ.ErrorName.accessDenied {
                throw RadioError.accessDenied("scan with Bluetooth adapter \(adapter.name)", cause: error)
            }
            // The manager reconnects and says when it is ready again.
            if error.isDisconnection { return [] }
            // NotReady (being powered off), Failed (controller busy): wait for the next change.
            notice("Bluetooth adapter \(adapter.name) refused to start discovery (\(error)); waiting for it to change.")
            return []
        }
        discoveringOn = adapter.path
        notice("Scanning with Bluetooth adapter \(adapter.name) (\(adapter.address)).")
        let known = if let objects { objects.devices(on: adapter.path) } else { await manager.devices(on: adapter.path) }
        var advertisements: [Advertisement] = []
        for device in known {
            devices[device.path] = device
            if let advertisement = await advertisement(from: device.path, heard: false) { advertisements.append(advertisement) }
        }
        return advertisements
    }

    /// The advertisement a device's current properties describe, when it is on our adapter and
    /// passes our own filter. `heard`: false for what bluetoothd already knew when discovery
    /// started (not a reception: the stall watch does not count it).
    private mutating func advertisement(from path: DBusObjectPath, heard: Bool = true) async -> Advertisement? {
        if devices[path] == nil { devices[path] = await manager.device(at: path) }
        guard let discoveringOn, let device = devices[path],
              device.adapter == discoveringOn || path.isDescendant(of: discoveringOn),
              let address = device.address, let rssi = device.rssi, rssi >= scanner.rssiThreshold
        else { return nil }
        if !device.problems.isEmpty {
            logger.debug("Device \(address): \(device.problems.joined(separator: "; "))")
            devices[path]?.problems.removeAll()
        }
        if heard { activity?.advertisement() }
        return Advertisement(time: start.duration(to: .now).inSeconds, address: address, addressType: device.addressType,
                             rssi: rssi, data: devices[path]!.advertisingData)
    }

    func stopDiscovery() async {
        guard let adapter = discoveringOn, let session else { return }
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
