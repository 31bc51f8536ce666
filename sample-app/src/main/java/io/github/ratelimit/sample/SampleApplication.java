package io.github.ratelimit.sample;

import io.github.ratelimit.web.RateLimitPlanResolver;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A small API whose endpoints are rate limited with {@code @RateLimited}.
 * <p>
 * {@snippet lang = "shell" :
 * java -jar sample-app/target/sample-app-0.1.0-SNAPSHOT.jar                          # counters in memory
 * java -jar sample-app/target/sample-app-0.1.0-SNAPSHOT.jar --spring.profiles.active=redis   # counters in Redis
 * }
 */
@SpringBootApplication
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

	/**
	 * The plan of a request, from its API key: keys starting {@code pro-} are on {@code pro}, any other key and no
	 * key on {@code free} (ratelimit.plans in application.yml).
	 */
	@Bean
	RateLimitPlanResolver planResolver() {
		return (request) -> {
			String apiKey = request.getHeader("X-API-Key");
			return (apiKey != null && apiKey.startsWith("pro-")) ? "pro" : "free";
		};
	}

}
