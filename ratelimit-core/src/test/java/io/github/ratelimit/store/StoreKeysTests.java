package io.github.ratelimit.store;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StoreKeysTests {

	@Test
	void shortKeysAreKeptAsTheyAre() {
		assertThat(StoreKeys.bounded("alice")).isEqualTo("alice");
		assertThat(StoreKeys.bounded("é".repeat(128))).isEqualTo("é".repeat(128)); // 256 bytes
	}

	@Test
	void longKeysAreReplacedByTheirHash() {
		String hashed = StoreKeys.bounded("é".repeat(129));
		assertThat(hashed).startsWith(StoreKeys.HASHED_PREFIX).hasSizeLessThan(60);
		assertThat(StoreKeys.bounded("x".repeat(257))).startsWith(StoreKeys.HASHED_PREFIX);
	}

	@Test
	void aKeyCannotPassItselfOffAsAHashedOne() {
		String forged = StoreKeys.HASHED_PREFIX + "abc";
		assertThat(StoreKeys.bounded(forged)).startsWith(StoreKeys.HASHED_PREFIX).isNotEqualTo(forged);
	}

	@Test
	void loneSurrogatesKeepLongKeysApart() {
		String prefix = "x".repeat(300);
		assertThat(StoreKeys.bounded(prefix + "\uD800")).isNotEqualTo(StoreKeys.bounded(prefix + "?"));
		assertThat(StoreKeys.bounded(prefix + "\uD800\uD800")).isNotEqualTo(StoreKeys.bounded(prefix + "\uDBFF\uD800"));
	}

}
