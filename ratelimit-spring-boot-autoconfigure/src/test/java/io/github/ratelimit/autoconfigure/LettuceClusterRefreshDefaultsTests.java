package io.github.ratelimit.autoconfigure;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

class LettuceClusterRefreshDefaultsTests {

	private final StandardEnvironment environment = new StandardEnvironment();

	@Test
	void clusterTopologyRefreshIsAdaptiveAndPeriodicByDefault() {
		postProcess();
		assertThat(this.environment.getProperty("spring.data.redis.lettuce.cluster.refresh.adaptive")).isEqualTo("true");
		assertThat(this.environment.getProperty("spring.data.redis.lettuce.cluster.refresh.period")).isEqualTo("1s");
	}

	@Test
	void whatTheApplicationConfiguredWins() {
		this.environment.getPropertySources()
			.addFirst(new MapPropertySource("application",
					Map.of("spring.data.redis.lettuce.cluster.refresh.adaptive", "false",
							"spring.data.redis.lettuce.cluster.refresh.period", "")));
		postProcess();
		assertThat(this.environment.getProperty("spring.data.redis.lettuce.cluster.refresh.adaptive"))
			.isEqualTo("false");
		assertThat(this.environment.getProperty("spring.data.redis.lettuce.cluster.refresh.period")).isEmpty();
	}

	@Test
	void nothingIsAddedWhenRateLimitingIsDisabled() {
		this.environment.getPropertySources()
			.addFirst(new MapPropertySource("application", Map.of("ratelimit.enabled", "false")));
		postProcess();
		assertThat(this.environment.getPropertySources().contains(LettuceClusterRefreshDefaults.PROPERTY_SOURCE_NAME))
			.isFalse();
	}

	@Test
	void theDefaultsAreRegisteredForSpringApplication() {
		assertThat(org.springframework.core.io.support.SpringFactoriesLoader
			.loadFactoryNames(org.springframework.boot.EnvironmentPostProcessor.class, getClass().getClassLoader()))
			.contains(LettuceClusterRefreshDefaults.class.getName());
	}

	private void postProcess() {
		new LettuceClusterRefreshDefaults().postProcessEnvironment(this.environment, new SpringApplication());
	}

}
