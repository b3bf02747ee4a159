// Package token is the token model of the market-data API: identity and metadata, market data
// with holder groups, per-window trade statistics, pool liquidity, and the sort and filter
// vocabulary of the multi-detail and ranking operations. It may import only the standard
// library, github.com/shopspring/decimal and other domain packages.
//
// Empty strings stand for the spec's null strings; nil pointers for its null numbers and booleans.
package token

import (
	"sort"
	"strings"
	"time"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// Token is the v2 identity and metadata record shared by search, multi-detail and ranking.
type Token struct {
	Address      string
	Chain        chain.Chain
	Decimals     int32
	Name         string
	Symbol       string
	VendorCoinID string
	Description  string
	// DevLastTokenCreatedAt is the time the creator last launched a token (an ISO string on the wire).
	DevLastTokenCreatedAt *time.Time
	DevTotalTokens        *int64
	ImageURL              string
	Market                string
	MetadataAddress       string
	URI                   string
	// CreatedAt is Unix milliseconds (tokenCreatedAt).
	CreatedAt          *int64
	CreatedBlockHeight *int64
	CreatedSlot        *int64
	CreatedTxSignature string
	Creators           []Creator
	// Extra is rendered as both extension and extra in the v2 shape.
	Extra        Extra
	Socials      Socials
	LaunchpadTag Tag
}

// Creator is one entry of tokenCreators; Share is a percentage (0–100).
type Creator struct {
	Address    string `json:"address"`
	IsVerified bool   `json:"isVerified"`
	Share      int64  `json:"share"`
}

// Extra holds the extension/extra fields. MigratedAt is Unix milliseconds here; the
// multi-detail shape shows it in seconds, which is the renderer's job. The JSON names are the
// API's; the NDJSON ingest format and the stored tokens.extra column both use them.
type Extra struct {
	CollectionAddress        string `json:"collectionAddress,omitempty"`
	EditionNonce             *int64 `json:"editionNonce,omitempty"`
	FreezeAuthority          string `json:"freezeAuthority,omitempty"`
	Fungible                 *bool  `json:"fungible,omitempty"`
	IsMutable                *bool  `json:"isMutable,omitempty"`
	IsNative                 *bool  `json:"isNative,omitempty"`
	IsVerifiedCollection     *bool  `json:"isVerifiedCollection,omitempty"`
	IsWrapped                *bool  `json:"isWrapped,omitempty"`
	Key                      string `json:"key,omitempty"`
	LaunchFromProgramAddress string `json:"launchFromProgramAddress,omitempty"`
	LaunchFromProtocolFamily string `json:"launchFromProtocolFamily,omitempty"`
	MigratedAt               *int64 `json:"migratedAt,omitempty"`
	MigratedToPoolAddress    string `json:"migratedToPoolAddress,omitempty"`
	MigratedToProgramAddress string `json:"migratedToProgramAddress,omitempty"`
	MigratedToProtocolFamily string `json:"migratedToProtocolFamily,omitempty"`
	MintAuthority            string `json:"mintAuthority,omitempty"`
	PrimarySaleHappened      *bool  `json:"primarySaleHappened,omitempty"`
	ProgramAddress           string `json:"programAddress,omitempty"`
	SellerFeeBasisPoints     *int64 `json:"sellerFeeBasisPoints,omitempty"`
	TokenStandard            string `json:"tokenStandard,omitempty"`
	UpdateAuthority          string `json:"updateAuthority,omitempty"`
}

// The socialMedias keys of the spec. SocialTheService is the key the spec writes as
// "the service"; the public API calls it "reddit", which NewSocials accepts as an alias.
const (
	SocialBitbucket  = "bitbucket"
	SocialDiscord    = "discord"
	SocialFacebook   = "facebook"
	SocialGithub     = "github"
	SocialInstagram  = "instagram"
	SocialLinkedin   = "linkedin"
	SocialMedium     = "medium"
	SocialTheService = "the service"
	SocialTelegram   = "telegram"
	SocialTiktok     = "tiktok"
	SocialTwitter    = "twitter"
	SocialWebsite    = "website"
	SocialYoutube    = "youtube"
)

// SocialKeys lists the accepted keys in the spec's order.
var SocialKeys = []string{
	SocialBitbucket, SocialDiscord, SocialFacebook, SocialGithub, SocialInstagram, SocialLinkedin,
	SocialMedium, SocialTheService, SocialTelegram, SocialTiktok, SocialTwitter, SocialWebsite, SocialYoutube,
}

const socialAliasReddit = "reddit"

// Socials is the socialMedias object. Its keys are always spec keys; the zero value is empty.
type Socials struct {
	links map[string]string
}

// NewSocials validates a key→link map. Keys are matched case-insensitively; blank links are
// dropped because the API renders an unknown link as absent, not as "".
func NewSocials(links map[string]string) (Socials, error) {
	out := make(map[string]string, len(links))
	for k, v := range links {
		key := strings.ToLower(strings.TrimSpace(k))
		if key == socialAliasReddit {
			key = SocialTheService
		}
		if !isSocialKey(key) {
			return Socials{}, fault.InvalidParam("socialMedias", k, SocialKeys...)
		}
		if v = strings.TrimSpace(v); v != "" {
			out[key] = v
		}
	}
	return Socials{links: out}, nil
}

func isSocialKey(k string) bool {
	for _, s := range SocialKeys {
		if s == k {
			return true
		}
	}
	return false
}

// Get returns the link under key, "" when absent.
func (s Socials) Get(key string) string { return s.links[key] }

// Has reports whether a link is present under key.
func (s Socials) Has(key string) bool { return s.links[key] != "" }

// Any reports whether any link is present.
func (s Socials) Any() bool { return len(s.links) > 0 }

// Map returns a copy of the links.
func (s Socials) Map() map[string]string {
	out := make(map[string]string, len(s.links))
	for k, v := range s.links {
		out[k] = v
	}
	return out
}

// Keys returns the present keys in sorted order, for deterministic rendering.
func (s Socials) Keys() []string {
	keys := make([]string, 0, len(s.links))
	for k := range s.links {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
