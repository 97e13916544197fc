import Glibc
import Radio
import Testing

/// Where the raw HCI backend notes what it switched on, so a run after a killed one can undo it.
@Suite struct HCIOptionsTests {
    @Test func stateFolderIsSystemdsElseTheRuntimeFolder() {
        #expect(HCIOptions.defaultStateDirectory(environment: ["STATE_DIRECTORY": "/var/lib/beacon:/var/lib/other", "XDG_RUNTIME_DIR": "/run/user/1"])
            == "/var/lib/beacon")
        #expect(HCIOptions.defaultStateDirectory(environment: ["XDG_RUNTIME_DIR": "/run/user/1"]) == "/run/user/1/nearplay")
        #expect(HCIOptions.defaultStateDirectory(environment: ["STATE_DIRECTORY": "", "XDG_RUNTIME_DIR": ""]) == "/tmp/nearplay-\(getuid())")
    }
}
