import Logging
import Ranging
import Traces

extension Agent {
    /// The ranging the agent scans with: range events every second, and the site profile
    /// `nearplay calibrate ranging --receiver NAME` stored for this radio, if any (NAME being the
    /// BlueZ adapter, or the simulated air's device; "default" otherwise). A profile file that
    /// cannot be read is logged and ignored: the agent then ranges with the defaults.
    func rangingConfiguration() -> RangingConfiguration {
        let configuration = RangingConfiguration(rangeInterval: 1)
        let receiver = self.configuration.radio.adapter ?? self.configuration.radio.device ?? "default"
        do {
            guard let profile = try RangingProfileStore().load().receivers[receiver] else { return configuration }
            logger.info("ranging with the site profile stored for \(receiver): offset \(profile.rssiOffset) dB, exponent \(profile.exponent)")
            return profile.applied(to: configuration)
        } catch {
            logger.warning("ranging with the default model, without a site profile: \(error)")
            return configuration
        }
    }
}
