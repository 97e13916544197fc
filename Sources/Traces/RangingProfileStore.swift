import Foundation
import Ranging
import SystemSupport

/// Ranging profiles per receiver, in a small JSON file, by default
/// `$XDG_CONFIG_HOME/nearplay/ranging-profiles.json` (or `~/.config/nearplay/…`):
/// `{"receivers":{"hci0":{"rssiOffset":-3.1,"exponent":2.4,"distances":[1,3],"readings":120}}}`.
public struct RangingProfileStore: Sendable {
    public var path: String

    public struct Contents: Sendable, Hashable, Codable {
        public var receivers: [String: RangingProfile] = [:]
        public init() {}
    }

    public init(path: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.path = path ?? XDGDirectories(environment: environment).configDirectory + "/ranging-profiles.json"
    }

    /// The stored profiles; none when the file does not exist yet.
    public func load() throws -> Contents {
        guard FileManager.default.fileExists(atPath: path) else { return Contents() }
        do {
            return try JSONDecoder().decode(Contents.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            let problem = (error as? DecodingError).map(TraceReader.describe) ?? error.localizedDescription
            throw RangingProfileStoreError(message: "\(path) is not a ranging profile file (\(problem)); delete it and run `nearplay calibrate ranging` again")
        }
    }

    /// Stores `profile` for `receiver`, keeping the others; replaces the file atomically.
    public func save(_ profile: RangingProfile, receiver: String) throws {
        var contents = try load()
        contents.receivers[receiver] = profile
        let url = URL(fileURLWithPath: path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(contents).write(to: url, options: .atomic)
    }
}

public struct RangingProfileStoreError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
