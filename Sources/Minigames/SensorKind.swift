/// A sensor a game reads.
public enum SensorKind: String, Codable, Sendable, CaseIterable {
    case microphone
    case accelerometer
}
