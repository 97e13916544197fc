import Agent
import ArgumentParser
import Foundation
import Ranging
import SystemSupport
import Traces

/// `nearplay beacon --location NAME`: a stationary device that marks a multiplayer location.
struct BeaconCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon",
        abstract: "Mark a multiplayer location: register it with the lobby and advertise its beacon until stopped.",
        discussion: """
            Registers the location NAME with the lobby under the session `nearplay login` stored (or re-uses \
            the location registered before under that name), then advertises the location's iBeacon identity. \
            Agents that come near show it (with its tournaments) and prove their presence to the lobby, so their \
            players can join its tournaments. Runs unattended (systemd/nearplay-beacon@.service); SIGTERM or \
            Ctrl-C withdraws the advertisement and exits 0. The session is read from --credentials, else \
            $CREDENTIALS_DIRECTORY/credentials.json (systemd's LoadCredential=), else \
            $XDG_CONFIG_HOME/nearplay/credentials.json; the location is remembered in $STATE_DIRECTORY (systemd's \
            StateDirectory=), else $XDG_STATE_HOME/nearplay, so a restart while the lobby is away still advertises.

            With --site and --position the beacon is placed on a site of yours and also listens: every 10 s (--hearing-interval) it \
            reports your other beacons on that site it hears, and the lobby solves the site's path-loss exponent \
            from the readings at the distances between them; agents near your locations range with it. Place \
            five beacons or more, some near each other and some far apart: with four the exponent stays too \
            uncertain for agents to use it, and five also measure how much the room shadows.
            """
    )

    @Option(help: "The location's name, 1 to 64 characters (the lobby's; unique in the deployment).")
    var location: String

    @Option(help: ArgumentHelp("The IANA time zone its tournaments' days, weeks and months follow, e.g. Europe/Oslo (default: UTC, or what it has).", valueName: "zone"))
    var timeZone: String?

    @Option(help: ArgumentHelp("The stored session to register with.", valueName: "file"))
    var credentials: String?

    @Option(help: ArgumentHelp("The lobby's address (default: the one of the session).", valueName: "url"))
    var lobby: String?

    @Option(help: ArgumentHelp("Publish the site profile `nearplay calibrate ranging` stored for this receiver (default: the adapter's, else \"default\"; none stored: nothing is published).", valueName: "receiver"))
    var siteProfile: String?

    @Option(help: ArgumentHelp("Calibrate the site from beacons that hear each other: the label of the place this beacon shares with your others (a hall, a floor); needs --position.", valueName: "label"))
    var site: String?

    @Option(help: ArgumentHelp("Where this beacon stands on the site, in metres: x,y on a plane you choose for the whole site (e.g. 0,0 and 8.5,3); needs --site.", valueName: "x,y"))
    var position: String?

    @Option(help: ArgumentHelp("With --site: how often to report the beacons heard, in seconds (1 to 20).", valueName: "seconds"))
    var hearingInterval: Double = 10

    @OptionGroup var profiles: ProfilesOption<BeaconCommand>

    @OptionGroup var radio: RadioOptions
    @OptionGroup var backend: BackendOptions

    func validate() throws {
        let name = location.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(name.count) else { throw ValidationError("--location takes a name of 1 to 64 characters.") }
        if let timeZone, TimeZone(identifier: timeZone) == nil {
            throw ValidationError("--time-zone takes an IANA time zone such as Europe/Oslo or UTC, not “\(timeZone)”.")
        }
        guard (site == nil) == (position == nil) else {
            throw ValidationError("--site and --position go together: the site's label and where on it this beacon stands, e.g. --site hall --position 0,4.5.")
        }
        if let site {
            let length = site.trimmingCharacters(in: .whitespacesAndNewlines).unicodeScalars.count
            guard (1...64).contains(length) else { throw ValidationError("--site takes a label of 1 to 64 characters, got \(length).") }
        }
        // The lobby takes a hearing up to 30 s after it was heard: a longer interval would lose
        // beacons heard early in it.
        guard (1...20).contains(hearingInterval) else {
            throw ValidationError("--hearing-interval takes 1 to 20 seconds, not \(hearingInterval).")
        }
        if let position, Self.coordinates(position) == nil {
            throw ValidationError("--position takes x,y in metres, each between -1000 and 1000, e.g. 0,4.5; not “\(position)”.")
        }
    }

    /// `x,y` in metres.
    static func coordinates(_ text: String) -> (x: Double, y: Double)? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let x = Double(parts[0]), let y = Double(parts[1]),
              x.isFinite, y.isFinite, abs(x) <= 1000, abs(y) <= 1000 else { return nil }
        return (x, y)
    }

    func run() async throws {
        radio.bootstrapLogging()
        let device: LocationBeaconDevice, session: Credentials
        do {
            (device, session) = try await prepare()
        } catch {
            throw CommandFailure(error.message)
        }
        await publishSiteProfile(of: device.location, session: session)
        if let placement = device.placement {
            do {
                _ = try await LocationBeaconDevice.place(device.location, at: placement, credentials: session)
                Diagnostics.write(String(format: "Placed on %@ at (%g, %g) m: listening for your other beacons there.\n", placement.site, placement.x, placement.y))
            } catch let error where error.code == "lobbyUnreachable" {
                // Advertised from memory: placed again when the lobby answers that it is not.
                Diagnostics.warning("\(error.message) It advertises all the same and places itself once the lobby answers.")
            } catch {
                throw CommandFailure("\(error.message) Fix --site or --position and start the beacon again.")
            }
        }
        Diagnostics.write("Location \(device.location.name) (\(device.location.id)): advertising \(device.location.beacon); Ctrl-C stops.\n")
        do {
            try await device.run()
        } catch let error as AgentError {
            throw CommandFailure(error.message)
        } catch {
            throw RadioFailure.report(error)
        }
    }

    /// Publishes the site profile stored for this receiver, if there is one. A failure is a
    /// warning: the location is advertised all the same.
    private func publishSiteProfile(of location: MarkedLocation, session: Credentials) async {
        let receiver = siteProfile ?? radio.adapter ?? "default"
        let stored: RangingProfile?
        do {
            let contents = try profiles.store.load().receivers
            stored = contents[receiver] ?? (siteProfile == nil ? contents["default"] : nil)
        } catch {
            Diagnostics.warning("\(error); the site profile is not published.")
            return
        }
        guard let stored else {
            if siteProfile != nil { Diagnostics.warning("no ranging profile is stored for \(receiver): run `nearplay calibrate ranging --receiver \(receiver)` first.") }
            return
        }
        do {
            _ = try await LocationBeaconDevice.publishSiteProfile(
                exponent: stored.exponent, distances: stored.distances, readings: stored.readings, of: location, credentials: session)
            Diagnostics.write(String(format: "Published the site profile: path-loss exponent %.2f, measured at %@.\n",
                                     stored.exponent, stored.distances.map { String(format: "%g m", $0) }.joined(separator: ", ")))
        } catch {
            Diagnostics.warning("\(error.message)")
        }
    }

    /// The location registered (or remembered) and the radio to advertise it on, with the
    /// session it was registered under.
    private func prepare() async throws(AgentError) -> (LocationBeaconDevice, Credentials) {
        let environment = ProcessInfo.processInfo.environment
        let paths = AgentPaths(environment: environment)
        let directories = XDGDirectories(environment: environment)
        let systemdCredentials = directories.serviceCredentialsDirectory.map { $0 + "/credentials.json" }
        let credentialsFile = credentials ?? systemdCredentials.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
            ?? paths.credentialsFile
        let stateDirectory = directories.serviceStateDirectory ?? paths.stateDirectory
        let session = try Credentials.load(from: credentialsFile)
        let marked = try await LocationBeaconDevice.register(
            name: location.trimmingCharacters(in: .whitespacesAndNewlines), timeZone: timeZone, credentials: session,
            lobbyURL: lobby, stateDirectory: stateDirectory)
        guard site != nil else {
            return (LocationBeaconDevice(location: marked, advertiser: backend.advertiser(adapter: radio.adapter), session: session), session)
        }
        // Placed: one radio advertises and listens for the other beacons on the site.
        let live = backend.selection(adapter: radio.adapter).makeRadio()
        var device = LocationBeaconDevice(location: marked, advertiser: live.advertiser, session: session)
        device.scanner = live.scanner
        device.hearingInterval = .seconds(hearingInterval)
        if let site, let position, let (x, y) = Self.coordinates(position) {
            device.placement = BeaconPlacement(site: site.trimmingCharacters(in: .whitespacesAndNewlines), x: x, y: y)
        }
        return (device, session)
    }
}

extension BeaconCommand: ProfilesHelp {
    static let profilesHelp = "The ranging profile file (default: $XDG_CONFIG_HOME/nearplay/ranging-profiles.json)."
}
