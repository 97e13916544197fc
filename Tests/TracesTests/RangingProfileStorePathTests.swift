import Testing
import Traces

/// Where the ranging profile file lives by default: in Nearplay's XDG configuration folder.
@Suite struct RangingProfileStorePathTests {
    @Test func defaultsToTheConfigurationFolder() {
        #expect(RangingProfileStore(environment: ["XDG_CONFIG_HOME": "/c"]).path == "/c/nearplay/ranging-profiles.json")
        #expect(RangingProfileStore(environment: ["HOME": "/h"]).path == "/h/.config/nearplay/ranging-profiles.json")
    }
}
