package io.github.ratelimit.actuate;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the endpoint shows of keys that are client addresses when masking is on.
 */
class ClientIpMaskTests {

	@Test
	void addressesKeepTheirNetworkAndOtherKeysAreShownAsTheyAre() {
		assertThat(ClientIpMask.mask("203.0.113.7")).isEqualTo("203.0.113.x");
		assertThat(ClientIpMask.mask("2001:db8:1:2:0:0:0:0/64")).isEqualTo("2001:db8:1:x");
		assertThat(ClientIpMask.mask("#ip:198.51.100.23")).isEqualTo("#ip:198.51.100.x");
		assertThat(ClientIpMask.mask("user-42")).isEqualTo("user-42");
		assertThat(ClientIpMask.mask("acme")).isEqualTo("acme");
	}

}
