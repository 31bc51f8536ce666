package io.github.ratelimit.redis;

import io.github.ratelimit.Algorithm;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

class RedisScriptsRuntimeHintsTests {

	@Test
	void everyScriptOfEveryAlgorithmIsAResourceHintRegisteredThroughAotFactories() {
		RuntimeHints hints = new RuntimeHints();
		SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
			.load(RuntimeHintsRegistrar.class)
			.forEach((registrar) -> registrar.registerHints(hints, getClass().getClassLoader()));
		assertThat(RuntimeHintsPredicates.resource().forResource("io/github/ratelimit/redis/prelude.lua"))
			.accepts(hints);
		for (Algorithm algorithm : Algorithm.values()) {
			assertThat(RuntimeHintsPredicates.resource()
				.forResource("io/github/ratelimit/redis/" + RateLimitScript.fileName(algorithm))).accepts(hints);
		}
	}

}
