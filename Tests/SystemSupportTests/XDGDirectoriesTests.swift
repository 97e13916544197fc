import Foundation
import SystemSupport
import Testing

/// Nearplay's XDG folders.
@Suite struct XDGDirectoriesTests {
    @Test func usesTheVariablesWhenSet() {
        let xdg = XDGDirectories(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s",
                                               "XDG_RUNTIME_DIR": "/run/user/1000", "STATE_DIRECTORY": "/var/lib/b:/var/lib/other",
                                               "CREDENTIALS_DIRECTORY": "/run/credentials/b.service"])
        #expect(xdg.configDirectory == "/c/nearplay")
        #expect(xdg.stateDirectory == "/s/nearplay")
        #expect(xdg.runtimeDirectory == "/run/user/1000/nearplay")
        #expect(xdg.serviceStateDirectory == "/var/lib/b", "systemd's first state folder")
        #expect(xdg.serviceCredentialsDirectory == "/run/credentials/b.service")
    }

    @Test func fallsBackUnderHomeAndTmpWhenUnsetOrEmpty() {
        for environment in [["HOME": "/h"], ["HOME": "/h", "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": "", "XDG_RUNTIME_DIR": "", "STATE_DIRECTORY": "", "CREDENTIALS_DIRECTORY": ""]] {
            let xdg = XDGDirectories(environment: environment)
            #expect(xdg.configDirectory == "/h/.config/nearplay")
            #expect(xdg.stateDirectory == "/h/.local/state/nearplay")
            #expect(xdg.runtimeDirectory == "/tmp/nearplay-\(getuid())")
            #expect(xdg.serviceStateDirectory == nil)
            #expect(xdg.serviceCredentialsDirectory == nil)
        }
        // An empty HOME counts as unset: the account's home folder, not the root.
        #expect(XDGDirectories(environment: ["HOME": ""]).configHome == NSHomeDirectory() + "/.config")
    }
}
