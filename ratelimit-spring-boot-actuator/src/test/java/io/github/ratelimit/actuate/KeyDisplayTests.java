package io.github.ratelimit.actuate;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the endpoint shows of a key: by default a keyed fingerprint, addresses masked, and a read only by what is
 * shown; the raw key only with {@code show-keys} and unrestricted access.
 */
class KeyDisplayTests {

	@Test
	void byDefaultAKeyIsAFingerprintAndAnAddressIsMasked() {
		KeyDisplay keys = KeyDisplay.fingerprinted(null);
		assertThat(keys.show("demo-pro-key")).matches("hmac:[0-9a-f]{12}").doesNotContain("demo");
		assertThat(keys.show("203.0.113.7")).isEqualTo("203.0.113.x");
		assertThat(keys.show("#ip:203.0.113.7")).isEqualTo("#ip:203.0.113.x");
		assertThat(keys.showsRawKeys()).isFalse();
	}

	@Test
	void eachInstanceDrawsItsOwnSecretUnlessOneIsConfigured() {
		assertThat(KeyDisplay.fingerprinted(null).show("demo-pro-key"))
			.isNotEqualTo(KeyDisplay.fingerprinted(null).show("demo-pro-key"));
		assertThat(KeyDisplay.fingerprinted("shared").show("demo-pro-key"))
			.isEqualTo(KeyDisplay.fingerprinted("shared").show("demo-pro-key"));
	}

	@Test
	void aReadNamesAKeyOnlyAsShownAmongTheHeaviest() {
		KeyDisplay keys = KeyDisplay.fingerprinted("shared");
		List<String> heaviest = List.of("demo-pro-key", "203.0.113.7");
		assertThat(keys.keyOf(keys.show("demo-pro-key"), heaviest)).isEqualTo("demo-pro-key");
		assertThat(keys.keyOf("203.0.113.x", heaviest)).isEqualTo("203.0.113.7");
		assertThat(keys.keyOf("demo-pro-key", heaviest)).as("no oracle: a raw key is not read").isNull();
		assertThat(keys.keyOf("203.0.113.x", List.of("203.0.113.7", "203.0.113.8"))).as("ambiguous").isNull();
	}

	@Test
	void rawKeysOnlyWithShowKeysAndUnrestrictedAccess() {
		Map<String, Object> properties = new HashMap<>();
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
		assertThat(KeyDisplay.of(environment, (id, access) -> Access.UNRESTRICTED, true).showsRawKeys()).isFalse();
		properties.put("ratelimit.heavy-hitters.show-keys", "true");
		assertThat(KeyDisplay.of(environment, (id, access) -> Access.READ_ONLY, true).showsRawKeys()).isFalse();
		KeyDisplay raw = KeyDisplay.of(environment, (id, access) -> Access.UNRESTRICTED, true);
		assertThat(raw.showsRawKeys()).isTrue();
		assertThat(raw.show("demo-pro-key")).isEqualTo("demo-pro-key");
		assertThat(raw.show("203.0.113.7")).as("mask-client-ip still masks addresses").isEqualTo("203.0.113.x");
		assertThat(KeyDisplay.of(environment, (id, access) -> Access.UNRESTRICTED, false).show("203.0.113.7"))
			.isEqualTo("203.0.113.7");
		assertThat(raw.keyOf("any-key", List.of())).isEqualTo("any-key");
	}

}
