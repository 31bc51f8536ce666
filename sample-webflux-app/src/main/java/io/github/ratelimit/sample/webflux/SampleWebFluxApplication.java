package io.github.ratelimit.sample.webflux;

import io.github.ratelimit.web.RateLimitPlanResolver;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The sample application's API on WebFlux, with the same HTTP contract as {@code sample-app}: every limit is decided
 * without blocking an event loop.
 * <p>
 * {@snippet lang = "shell" :
 * java -jar sample-webflux-app/target/sample-webflux-app-0.1.0-SNAPSHOT.jar                                # in memory
 * java -jar sample-webflux-app/target/sample-webflux-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis  # in Redis
 * }
 */
@SpringBootApplication
@EnableConfigurationProperties(SampleProperties.class)
public class SampleWebFluxApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleWebFluxApplication.class, args);
	}

	/**
	 * The issued API keys, as the key expressions of the keyed policies call them ({@code @apiKeys}).
	 */
	@Bean
	ApiKeys apiKeys(SampleProperties properties) {
		return new ApiKeys(properties.apiKeys());
	}

	/**
	 * The plan of a request: its API key's, if this API issued the key; any other key and no key are on the default
	 * plan, free (ratelimit.plans). A lookup in memory: it must not block.
	 */
	@Bean
	RateLimitPlanResolver planResolver(ApiKeys apiKeys) {
		return (request) -> apiKeys.plan(request.getHeader("X-API-Key"));
	}

}
