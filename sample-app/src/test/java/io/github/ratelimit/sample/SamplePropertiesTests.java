package io.github.ratelimit.sample;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SamplePropertiesTests {

	@Test
	void anAdminTokenShorterThan32CharactersIsRefusedAndABlankOneTurnsTheAdminEndpointsOff() {
		assertThatIllegalArgumentException().isThrownBy(() -> new SampleProperties(Map.of(), "change-me"))
			.withMessage("'sample.admin-token' must be at least 32 characters (openssl rand -hex 16) but has 9");
		assertThat(new SampleProperties(Map.of(), " ").adminToken()).isNull();
		assertThat(new SampleProperties(Map.of(), "0123456789abcdef0123456789abcdef").adminToken()).hasSize(32);
	}

}
