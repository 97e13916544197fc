import Foundation
import Radio
import Rounds

/// The agent's configuration file (JSON), by default `$XDG_CONFIG_HOME/nearplay/agent.json`.
///
/// Every key is optional; a missing file means all defaults. See the README's "The agent"
/// section for an example.
public struct AgentConfiguration: Codable, Sendable, Equatable {
    /// The lobby's root URL; the one `nearplay login` stored is used when this is absent.
    public var lobby: String?
    public var radio = RadioSettings()
    /// Where the identity cache, the outgoing queue and the event cursor live.
    public var stateDirectory: String?
    /// The local API's Unix socket.
    public var socket: String?
    /// The session token file that `nearplay login` / `register` write.
    public var credentials: String?
    /// Seconds a resolved player profile stays cached.
    public var identityCacheSeconds: Double = 600
    /// Seconds an identity that belongs to nobody (or to someone who blocked you) stays cached.
    public var unknownIdentityCacheSeconds: Double = 60
    /// Seconds between encounter reports for the players in range.
    public var encounterReportSeconds: Double = 20
    /// Raise desktop notifications on the session bus when there is one.
    public var notifications = true
    /// Advertise this player's beacon identity.
    public var advertise = true
    /// Play a game's rounds as soon as it starts (for devices with recorded inputs, like the demo).
    public var autoPlay = false
    /// Where the sensors are (the keys of `nearplay practice`'s options, snake_case).
    public var sensors = SensorSetup()
    /// A folder of recorded inputs to play rounds from instead of the sensors: `<game>.jsonl`
    /// (accelerometer) and `<game>.raw` (16 kHz S16_LE audio), as in `Samples/rounds/alice`.
    public var recordings: String?

    public init() {}

    /// The radio the agent listens and advertises with.
    public struct RadioSettings: Codable, Sendable, Equatable {
        public var backend: RadioBackend = .bluez
        /// BlueZ: the adapter (`hci0`); the first powered one when absent. hci: the controller
        /// (`hci0` when absent).
        public var adapter: String?
        /// Replay: the trace or btsnoop file to replay, at its recorded pace.
        public var file: String?
        /// Simulated air: the hub's socket and this device's name in its scenario.
        public var airSocket: String?
        public var device: String?

        private enum CodingKeys: String, CodingKey {
            case backend, adapter, file, airSocket = "air_socket", device
        }

        public init(backend: RadioBackend = .bluez, adapter: String? = nil, file: String? = nil,
                    airSocket: String? = nil, device: String? = nil) {
            self.backend = backend
            self.adapter = adapter
            self.file = file
            self.airSocket = airSocket
            self.device = device
        }

        public func validate() throws(AgentError) {
            if let selection, let problem = selection.problem(name: Self.keyName) {
                throw AgentError(problem, code: "badConfiguration")
            }
            if backend == .replay, file == nil {
                throw AgentError("radio.file: the replay backend needs the trace to replay.", code: "badConfiguration")
            }
        }

        /// The live radio these settings choose (nil for a replay), made the way every command makes it.
        public var selection: RadioSelection? {
            guard backend.isLive else { return nil }
            return RadioSelection(backend: backend, adapter: adapter,
                                  airSocket: backend == .sim ? airSocket ?? SimulatedAir.defaultSocketPath(environment: ProcessInfo.processInfo.environment) : airSocket,
                                  device: device)
        }

        static func keyName(_ setting: RadioSelection.Setting) -> String {
            switch setting {
            case .adapter: "radio.adapter"
            case .device: "radio.device"
            case .airSocket: "radio.air_socket"
            case .hciScan: "radio.hci_scan"
            }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case lobby, radio, stateDirectory = "state_directory", socket, credentials
        case identityCacheSeconds = "identity_cache_seconds", unknownIdentityCacheSeconds = "unknown_identity_cache_seconds"
        case encounterReportSeconds = "encounter_report_seconds", notifications, advertise, autoPlay = "auto_play", sensors, recordings
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = AgentConfiguration()
        lobby = try c.decodeIfPresent(String.self, forKey: .lobby)
        radio = try c.decodeIfPresent(RadioSettings.self, forKey: .radio) ?? defaults.radio
        stateDirectory = try c.decodeIfPresent(String.self, forKey: .stateDirectory)
        socket = try c.decodeIfPresent(String.self, forKey: .socket)
        credentials = try c.decodeIfPresent(String.self, forKey: .credentials)
        identityCacheSeconds = try c.decodeIfPresent(Double.self, forKey: .identityCacheSeconds) ?? defaults.identityCacheSeconds
        unknownIdentityCacheSeconds = try c.decodeIfPresent(Double.self, forKey: .unknownIdentityCacheSeconds) ?? defaults.unknownIdentityCacheSeconds
        encounterReportSeconds = try c.decodeIfPresent(Double.self, forKey: .encounterReportSeconds) ?? defaults.encounterReportSeconds
        notifications = try c.decodeIfPresent(Bool.self, forKey: .notifications) ?? defaults.notifications
        advertise = try c.decodeIfPresent(Bool.self, forKey: .advertise) ?? defaults.advertise
        autoPlay = try c.decodeIfPresent(Bool.self, forKey: .autoPlay) ?? defaults.autoPlay
        sensors = try c.decodeIfPresent(SensorSetup.self, forKey: .sensors) ?? defaults.sensors
        recordings = try c.decodeIfPresent(String.self, forKey: .recordings)
    }

    /// Checks the values JSON cannot check, naming the key at fault.
    public func validate() throws(AgentError) {
        if let lobby, URL(string: lobby)?.scheme.map({ ["http", "https"].contains($0) }) != true {
            throw AgentError("lobby: expected an http:// or https:// URL, not \(lobby.debugDescription).", code: "badConfiguration")
        }
        for (key, value) in [("identity_cache_seconds", identityCacheSeconds), ("unknown_identity_cache_seconds", unknownIdentityCacheSeconds),
                             ("encounter_report_seconds", encounterReportSeconds)] where !(value.isFinite && value > 0 && value <= 86_400) {
            throw AgentError("\(key): expected seconds between 0 and 86400, not \(value).", code: "badConfiguration")
        }
        try radio.validate()
        do {
            try sensors.validate()
        } catch {
            throw AgentError("sensors.\(error.field.rawValue): \(error.value.debugDescription) \(error.problem).", code: "badConfiguration")
        }
        if let recordings {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: recordings, isDirectory: &isFolder), isFolder.boolValue else {
                throw AgentError("recordings: \(recordings) is not a folder of recorded round inputs.", code: "badConfiguration")
            }
        }
    }

    /// Reads the configuration at `path`; all defaults when `path` is the default file and it does
    /// not exist. Errors name the file and the key.
    public static func load(path: String?, paths: AgentPaths = AgentPaths()) throws(AgentError) -> AgentConfiguration {
        let file = path ?? paths.configurationFile
        guard FileManager.default.fileExists(atPath: file) else {
            if path == nil { return AgentConfiguration() }
            throw AgentError("The configuration file \(file) does not exist.", code: "badConfiguration")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw AgentError("Cannot read the configuration file \(file).", code: "badConfiguration")
        }
        let configuration: AgentConfiguration
        do {
            configuration = try JSONDecoder().decode(AgentConfiguration.self, from: data)
        } catch {
            throw AgentError("\(file): \(describe(error))", code: "badConfiguration")
        }
        do {
            try configuration.validate()
        } catch {
            throw AgentError("\(file): \(error.message)", code: error.code)
        }
        return configuration
    }
}
