// Package files holds the file tools: read_files, find_files, edit_file,
// remove_file, restore_file, file_history and download_file, all confined to
// the workdir, with a version kept of every content they replace.
//
// Every access goes through the workdir's os.Root, after Workdir.Rel and a
// walk of the path's symbolic links (a link may lead neither outside the
// workdir nor into its reserved folder). Every change is made relative to a
// folder opened by a walk that follows no symbolic link (folder.go): the
// changed file, its temp file, its kept version, the version index and the
// locks, so that a link swapped in after the check redirects none of them.
// Writes are atomic: a temp file in the same folder, renamed into place.
// Before edit_file, remove_file,
// restore_file or download_file change a file, its current state (content,
// or the fact that it did not exist) becomes a numbered version under
// .toolround/versions/<hash of the path>/, with an index.json that records
// size, digest, time and the changes that made and replaced it; the newest
// Config.MaxVersions are kept. remove_file takes folders too: each file in
// them goes through the same versioning, so each can be restored.
package files

import (
	"errors"
	"net/http"
	"time"

	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/netguard"
)

// Config holds what the file tools need. Zero fields take the defaults
// documented on each field, set in withDefaults.
type Config struct {
	// Workdir confines every tool to TOOLS_WORKDIR. Required.
	Workdir *tools.Workdir

	// MaxFileBytes caps what read_files shows of one file, line numbers
	// included. Default 256 KiB.
	MaxFileBytes int
	// MaxReadBytes caps the whole output of one read_files call. Default 1 MiB.
	MaxReadBytes int
	// MaxListEntries caps the entries read_files lists for one folder.
	// Default 1000.
	MaxListEntries int
	// MaxFindResults caps the paths one find_files call returns. Default 500.
	MaxFindResults int
	// MaxEditBytes is the largest file edit_file changes with old_text; it
	// reads the whole file into memory. Default 16 MiB.
	MaxEditBytes int64

	// MaxVersions is how many earlier versions are kept per file; older ones
	// are dropped. Default 50.
	MaxVersions int
	// MaxVersionBytes is the largest content kept as a version. A larger file
	// is still changed, and the change's result says that no copy was kept.
	// Default 64 MiB.
	MaxVersionBytes int64
	// MaxRemoveFiles caps the files remove_file takes out of one folder (each
	// is kept as a version first). Default 1000.
	MaxRemoveFiles int

	// MaxDownloadBytes caps one download. Default 100 MiB.
	MaxDownloadBytes int64
	// DownloadTimeout bounds one download from connecting to the last byte.
	// Default 5 minutes.
	DownloadTimeout time.Duration
	// MaxRedirects is how many redirects a download follows. Default 10.
	MaxRedirects int
	// NetPolicy decides which addresses download_file may reach. Nil means
	// netguard.DefaultPolicy() (everything but cloud metadata addresses).
	NetPolicy *netguard.Policy
	// Transport, when set, replaces the transport built from NetPolicy; it
	// then owns the address policy. Default nil.
	Transport http.RoundTripper

	// Media is the endpoint of generate_image and generate_audio (G5).
	Media MediaConfig

	// Now is the clock of version records. Default time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = 256 << 10
	}
	if c.MaxReadBytes <= 0 {
		c.MaxReadBytes = 1 << 20
	}
	if c.MaxListEntries <= 0 {
		c.MaxListEntries = 1000
	}
	if c.MaxFindResults <= 0 {
		c.MaxFindResults = 500
	}
	if c.MaxEditBytes <= 0 {
		c.MaxEditBytes = 16 << 20
	}
	if c.MaxVersions <= 0 {
		c.MaxVersions = 50
	}
	if c.MaxVersionBytes <= 0 {
		c.MaxVersionBytes = 64 << 20
	}
	if c.MaxRemoveFiles <= 0 {
		c.MaxRemoveFiles = 1000
	}
	if c.MaxDownloadBytes <= 0 {
		c.MaxDownloadBytes = 100 << 20
	}
	if c.DownloadTimeout <= 0 {
		c.DownloadTimeout = 5 * time.Minute
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = 10
	}
	c.Media = c.Media.withDefaults(c.MaxDownloadBytes)
	if c.NetPolicy == nil {
		p := netguard.DefaultPolicy()
		c.NetPolicy = &p
	}
	if c.Transport == nil {
		c.Transport = c.NetPolicy.Transport()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// fileTools is the state the handlers share: the workdir and its versions.
type fileTools struct {
	cfg      Config
	wd       *tools.Workdir
	versions *store
	client   *http.Client
}

func newFileTools(cfg Config) (*fileTools, error) {
	if cfg.Workdir == nil {
		return nil, errors.New("files: Config.Workdir is required")
	}
	cfg = cfg.withDefaults()
	t := &fileTools{
		cfg:      cfg,
		wd:       cfg.Workdir,
		versions: newStore(cfg.Workdir.Root(), cfg.MaxVersions, cfg.MaxVersionBytes, cfg.Now),
	}
	t.client = t.newClient()
	return t, nil
}

// Definitions returns the file tools, ready to register. In session mode
// (W1) each session's calls act in its own workspace, with its own
// versions and locks (tools.PerSession).
func Definitions(cfg Config) ([]tools.Definition, error) {
	if cfg.Workdir == nil {
		return nil, errors.New("files: Config.Workdir is required")
	}
	defs, _, err := tools.PerSession(cfg.Workdir, func(wd *tools.Workdir) ([]tools.Definition, func(), error) {
		c := cfg
		c.Workdir = wd
		t, err := newFileTools(c)
		if err != nil {
			return nil, nil, err
		}
		return t.definitions(), nil, nil
	})
	return defs, err
}

func (t *fileTools) definitions() []tools.Definition {
	return []tools.Definition{
		t.readFilesDef(),
		t.findFilesDef(),
		t.editFileDef(),
		t.removeFileDef(),
		t.restoreFileDef(),
		t.fileHistoryDef(),
		t.downloadFileDef(),
		t.generateImageDef(),
		t.generateAudioDef(),
	}
}

// Register adds the file tools to reg.
func Register(reg *tools.Registry, cfg Config) error {
	defs, err := Definitions(cfg)
	if err != nil {
		return err
	}
	return reg.RegisterAll(defs...)
}
