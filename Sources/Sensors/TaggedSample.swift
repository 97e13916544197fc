/// A sample with the `sensor` key that tells JSON Lines readers which kind it is: a line of the
/// files ``SampleFile`` reads, as `nearplay sensors --json` writes them.
public struct TaggedSample<Sample: Encodable>: Encodable {
    /// "accel" or "mic".
    public var sensor: String
    public var sample: Sample

    public init(sensor: String, sample: Sample) {
        self.sensor = sensor
        self.sample = sample
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sensor, forKey: .sensor)
        try sample.encode(to: encoder)
    }

    enum CodingKeys: String, CodingKey { case sensor }
}
