package io.github.ratelimit.sample.mcp;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * An MCP server (Streamable HTTP on {@code /mcp}) whose two tools are rate limited: per session, per client and per
 * tool. Its clients are the agents it knows, authenticated with HTTP Basic; a real server would take OAuth tokens
 * ({@code #principal} is then the token's client or user).
 * <p>
 * {@snippet lang = "shell" :
 * java -jar sample-mcp-server/target/sample-mcp-server-0.1.0-SNAPSHOT.jar     # http://localhost:8080/mcp
 * }
 */
@SpringBootApplication
public class SampleMcpServer {

	public static void main(String[] args) {
		SpringApplication.run(SampleMcpServer.class, args);
	}

	/** The agents this sample knows. Sample credentials: an application takes its clients from its identity provider. */
	@Bean
	UserDetailsService agents() {
		return new InMemoryUserDetailsManager(
				User.withUsername("agent-a").password("{noop}agent-a-secret").roles("AGENT").build(),
				User.withUsername("agent-b").password("{noop}agent-b-secret").roles("AGENT").build(),
				User.withUsername("agent-c").password("{noop}agent-c-secret").roles("AGENT").build());
	}

	/** Every request is an authenticated agent's; the MCP endpoint is an API, not a browser's form. */
	@Bean
	SecurityFilterChain security(HttpSecurity http) throws Exception {
		return http.authorizeHttpRequests((requests) -> requests.requestMatchers("/actuator/health").permitAll()
			.anyRequest()
			.authenticated())
			.httpBasic(Customizer.withDefaults())
			.csrf((csrf) -> csrf.ignoringRequestMatchers("/mcp"))
			.build();
	}

}
