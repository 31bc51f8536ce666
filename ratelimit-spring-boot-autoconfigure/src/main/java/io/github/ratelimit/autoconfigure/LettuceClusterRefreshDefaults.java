package io.github.ratelimit.autoconfigure;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Defaults Lettuce's Redis Cluster topology refresh to adaptive and periodic (every second), so that when a master
 * fails and a replica takes over, decisions for its keys come back within the cluster's node timeout plus a few
 * seconds. With Spring Boot's own defaults (no refresh) the client keeps sending them to the dead node, and the limit
 * stays off for a third of the keys of a three-master cluster.
 * <p>
 * The values are added as the last property source: anything the application sets for
 * {@code spring.data.redis.lettuce.cluster.refresh.*} wins, and an empty {@code period} turns periodic refresh off
 * again. Nothing is added when rate limiting is disabled. The properties only matter to a Lettuce Cluster client.
 */
class LettuceClusterRefreshDefaults implements EnvironmentPostProcessor, Ordered {

	static final String PROPERTY_SOURCE_NAME = "ratelimitLettuceClusterRefreshDefaults";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getProperty("ratelimit.enabled", Boolean.class, true)) {
			return;
		}
		environment.getPropertySources()
			.addLast(new MapPropertySource(PROPERTY_SOURCE_NAME,
					Map.of("spring.data.redis.lettuce.cluster.refresh.adaptive", "true",
							"spring.data.redis.lettuce.cluster.refresh.period", "1s")));
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
